package xlog

// Space returns how much of the log recovery may still need (from the
// tail to the head) and the log's size, both in 512-byte basic blocks.
func (w *Writer) Space() (used, size uint32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.usedLocked(), w.blocks
}
