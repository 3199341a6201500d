package dabtree

// Viewed tells tests whether b is still a read-only view.
func (b *Buf) Viewed() bool { return b.view }
