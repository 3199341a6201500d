package admin

import (
	"errors"
	"testing"

	"github.com/xfs3/xfs3/store"
)

// TestDecodeMinioQuota: the limit is size when non-zero, else quota; only
// hard quotas without request limits are accepted.
func TestDecodeMinioQuota(t *testing.T) {
	for _, c := range []struct {
		body  string
		limit uint64
		ok    bool
	}{
		{`{"quota":8388608,"size":0,"rate":0,"requests":0,"quotatype":"hard"}`, 8 << 20, true}, // mc today
		{`{"quota":0,"size":8388608,"quotatype":"hard"}`, 8 << 20, true},                       // newer clients
		{`{"quota":1,"size":4096,"quotatype":"hard"}`, 4096, true},
		{`{"quota":0,"size":0,"rate":0,"requests":0}`, 0, true}, // mc quota clear
		{`{"quota":1024,"quotatype":"hard","future":"field"}`, 1024, true},
		{`{"quota":1024,"quotatype":"fifo"}`, 0, false},
		{`{"quota":1024,"quotatype":"HARD"}`, 0, false},
		{`{"quota":1024,"requests":10}`, 0, false},
		{`{"quota":1024,"rate":1}`, 0, false},
		{`{"quota":1152921504606846977}`, 0, false},
		{`{"quota":"1G"}`, 0, false},
		{`[1]`, 0, false},
		{``, 0, false},
	} {
		m, err := DecodeMinioQuota([]byte(c.body))
		var ae *Error
		switch {
		case c.ok && (err != nil || m.Limit() != c.limit):
			t.Errorf("%s: limit %d, %v; want %d", c.body, m.Limit(), err, c.limit)
		case !c.ok && (!errors.As(err, &ae) || ae.Status != 400 || ae.Code != "XMinioAdminInvalidArgument"):
			t.Errorf("%s: %v, want XMinioAdminInvalidArgument", c.body, err)
		}
	}
}

// TestLimitsApply: absent fields keep their limit, present ones replace
// it (0 removes it); unknown fields and trailing data are refused.
func TestLimitsApply(t *testing.T) {
	old := store.BucketQuota{HardBytes: 1, SoftBytes: 2, HardObjects: 3, SoftObjects: 4}
	for _, c := range []struct {
		body string
		want store.BucketQuota
		ok   bool
	}{
		{`{}`, old, true},
		{`{"hard_bytes":10}`, store.BucketQuota{HardBytes: 10, SoftBytes: 2, HardObjects: 3, SoftObjects: 4}, true},
		{`{"soft_bytes":0,"soft_objects":0}`, store.BucketQuota{HardBytes: 1, HardObjects: 3}, true},
		{`{"hard_bytes":0,"soft_bytes":0,"hard_objects":0,"soft_objects":0}`, store.BucketQuota{}, true},
		{`{"hard_objects":18446744073709551615}`, store.BucketQuota{HardBytes: 1, SoftBytes: 2, HardObjects: 1<<64 - 1, SoftObjects: 4}, true},
		{`{"hard_bytes":1152921504606846977}`, old, false},
		{`{"hard":1}`, old, false},
		{`{"hard_bytes":1} x`, old, false},
		{`{"hard_bytes":-1}`, old, false},
		{``, old, false},
	} {
		l, err := DecodeLimits([]byte(c.body))
		if (err == nil) != c.ok {
			t.Errorf("%s: %v", c.body, err)
			continue
		}
		if got := l.Apply(old); c.ok && got != c.want {
			t.Errorf("%s: %+v, want %+v", c.body, got, c.want)
		}
	}
	for body, ok := range map[string]bool{
		`{"bytes_grace_seconds":60}`: true, `{"objects_grace_seconds":4294967295}`: true, `{}`: true,
		`{"bytes_grace_seconds":-1}`: false, `{"objects_grace_seconds":4294967296}`: false, `{"grace":1}`: false,
	} {
		if _, err := DecodeGrace([]byte(body)); (err == nil) != ok {
			t.Errorf("grace %s: %v", body, err)
		}
	}
}
