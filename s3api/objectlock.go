package s3api

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/xfs3/xfs3/s3api/iam"
	"github.com/xfs3/xfs3/store"
)

// Object lock: a bucket's configuration (?object-lock), a version's
// retention (?retention) and legal hold (?legal-hold), the lock headers
// of writes and reads, and governance bypass. The rules themselves are
// the store's (store.Locks); this file speaks S3's XML and headers.

const (
	hdrLockMode      = "X-Amz-Object-Lock-Mode"
	hdrLockUntil     = "X-Amz-Object-Lock-Retain-Until-Date"
	hdrLegalHold     = "X-Amz-Object-Lock-Legal-Hold"
	hdrBypass        = "X-Amz-Bypass-Governance-Retention"
	hdrBucketLockOn  = "X-Amz-Bucket-Object-Lock-Enabled"
	maxLockBody      = 4 << 10
	lockEnabledValue = "Enabled"
)

type objectLockConfiguration struct {
	XMLName           struct{}        `xml:"ObjectLockConfiguration"`
	Xmlns             string          `xml:"xmlns,attr,omitempty"`
	ObjectLockEnabled string          `xml:"ObjectLockEnabled,omitempty"`
	Rule              *objectLockRule `xml:"Rule,omitempty"`
}

type objectLockRule struct {
	DefaultRetention *defaultRetention `xml:"DefaultRetention"`
}

type defaultRetention struct {
	Mode  string `xml:"Mode"`
	Days  int    `xml:"Days,omitempty"`
	Years int    `xml:"Years,omitempty"`
}

type retentionXML struct {
	XMLName         struct{} `xml:"Retention"`
	Xmlns           string   `xml:"xmlns,attr,omitempty"`
	Mode            string   `xml:"Mode,omitempty"`
	RetainUntilDate string   `xml:"RetainUntilDate,omitempty"`
}

type legalHoldXML struct {
	XMLName struct{} `xml:"LegalHold"`
	Xmlns   string   `xml:"xmlns,attr,omitempty"`
	Status  string   `xml:"Status"`
}

func (s *server) getObjectLockConfig(w http.ResponseWriter, r *http.Request, rq *request) error {
	cfg, err := s.store.Locks().Config(rq.bucket)
	if errors.Is(err, store.ErrNoLockConfig) {
		return errorf("ObjectLockConfigurationNotFoundError", "Object Lock configuration does not exist for this bucket")
	}
	if err != nil {
		return err
	}
	out := objectLockConfiguration{Xmlns: xmlns, ObjectLockEnabled: lockEnabledValue}
	if cfg.DefaultMode != "" {
		out.Rule = &objectLockRule{&defaultRetention{Mode: cfg.DefaultMode, Days: cfg.Days, Years: cfg.Years}}
	}
	writeXML(w, http.StatusOK, out)
	return nil
}

func (s *server) putObjectLockConfig(w http.ResponseWriter, r *http.Request, rq *request) error {
	data, err := readXMLBody(r, rq, maxLockBody)
	if err != nil {
		return err
	}
	var in objectLockConfiguration
	if err := decodeXML(data, &in); err != nil {
		return err
	}
	if in.ObjectLockEnabled != lockEnabledValue {
		return errorf("MalformedXML", "ObjectLockEnabled must be Enabled: object lock cannot be turned off.")
	}
	cfg := store.LockConfig{Enabled: true}
	if in.Rule != nil {
		d := in.Rule.DefaultRetention
		if d == nil {
			return errorf("MalformedXML", "A Rule needs a DefaultRetention.")
		}
		if d.Mode != store.LockGovernance && d.Mode != store.LockCompliance {
			return errorf("MalformedXML", "The DefaultRetention Mode must be GOVERNANCE or COMPLIANCE, not %q.", d.Mode)
		}
		if (d.Days > 0) == (d.Years > 0) || d.Days < 0 || d.Years < 0 {
			return errorf("InvalidArgument", "Default retention period must be a positive integer value for exactly one of Days or Years.")
		}
		cfg.DefaultMode, cfg.Days, cfg.Years = d.Mode, d.Days, d.Years
	}
	if err := s.store.Locks().SetConfig(rq.bucket, cfg); err != nil {
		if errors.Is(err, store.ErrInvalidBucketState) {
			return errorf("InvalidBucketState", "Versioning must be 'Enabled' on the bucket to apply a Object Lock configuration")
		}
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *server) getObjectRetention(w http.ResponseWriter, r *http.Request, rq *request) error {
	lock, version, err := s.store.Locks().Get(rq.bucket, rq.key, rq.version)
	if err != nil {
		return err
	}
	setVersionID(w.Header(), version)
	if lock.Mode == "" {
		return errorf("NoSuchObjectLockConfiguration", "The specified object does not have a ObjectLock configuration")
	}
	writeXML(w, http.StatusOK, retentionXML{Xmlns: xmlns, Mode: lock.Mode, RetainUntilDate: isoTime(lock.Until)})
	return nil
}

func (s *server) putObjectRetention(w http.ResponseWriter, r *http.Request, rq *request) error {
	data, err := readXMLBody(r, rq, maxLockBody)
	if err != nil {
		return err
	}
	var in retentionXML
	if err := decodeXML(data, &in); err != nil {
		return err
	}
	ret, err := parseRetention(in.Mode, in.RetainUntilDate, "Mode", "RetainUntilDate")
	if err != nil {
		return err
	}
	version, err := s.store.Locks().SetRetention(rq.bucket, rq.key, rq.version, ret, s.bypassGovernance(r, rq, rq.key))
	if err != nil {
		return err
	}
	setVersionID(w.Header(), version)
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *server) getObjectLegalHold(w http.ResponseWriter, r *http.Request, rq *request) error {
	lock, version, err := s.store.Locks().Get(rq.bucket, rq.key, rq.version)
	if err != nil {
		return err
	}
	setVersionID(w.Header(), version)
	writeXML(w, http.StatusOK, legalHoldXML{Xmlns: xmlns, Status: legalHoldStatus(lock.LegalHold)})
	return nil
}

func (s *server) putObjectLegalHold(w http.ResponseWriter, r *http.Request, rq *request) error {
	data, err := readXMLBody(r, rq, maxLockBody)
	if err != nil {
		return err
	}
	var in legalHoldXML
	if err := decodeXML(data, &in); err != nil {
		return err
	}
	on, err := parseLegalHold(in.Status)
	if err != nil {
		return err
	}
	version, err := s.store.Locks().SetLegalHold(rq.bucket, rq.key, rq.version, on)
	if err != nil {
		return err
	}
	setVersionID(w.Header(), version)
	w.WriteHeader(http.StatusOK)
	return nil
}

func legalHoldStatus(on bool) string {
	if on {
		return "ON"
	}
	return "OFF"
}

func parseLegalHold(v string) (bool, error) {
	switch v {
	case "ON":
		return true, nil
	case "OFF":
		return false, nil
	}
	return false, errorf("MalformedXML", "Legal hold status must be ON or OFF, not %q.", v)
}

// parseRetention reads a mode and retain-until date, both or neither
// (an empty Retention removes one), named as the request names them.
func parseRetention(mode, until, modeName, untilName string) (store.Retention, error) {
	if mode == "" && until == "" {
		return store.Retention{}, nil
	}
	if mode == "" || until == "" {
		return store.Retention{}, errorf("InvalidArgument", "%s and %s must both be supplied.", untilName, modeName)
	}
	if mode != store.LockGovernance && mode != store.LockCompliance {
		return store.Retention{}, errorf("InvalidArgument", "Unknown wormMode directive %q: %s must be GOVERNANCE or COMPLIANCE.", mode, modeName)
	}
	t, err := time.Parse(time.RFC3339Nano, until)
	if err != nil {
		return store.Retention{}, errorf("InvalidArgument", "%s must be an ISO 8601 date and time, not %q.", untilName, until)
	}
	r := store.Retention{Mode: mode, Until: t.UTC()}
	if err := store.CheckRetention(r, time.Now()); err != nil {
		return store.Retention{}, errorf("InvalidArgument", "The retain until date must be in the future!")
	}
	return r, nil
}

// lockFromHeaders reads the object-lock headers of a write (PutObject,
// CopyObject, CreateMultipartUpload; a form upload's fields).
func lockFromHeaders(h http.Header) (store.ObjectLock, error) {
	var lock store.ObjectLock
	ret, err := parseRetention(h.Get(hdrLockMode), h.Get(hdrLockUntil), "x-amz-object-lock-mode", "x-amz-object-lock-retain-until-date")
	if err != nil {
		return lock, err
	}
	lock.Retention = ret
	if v, ok := h[hdrLegalHold]; ok {
		switch strings.TrimSpace(v[0]) {
		case "ON":
			lock.LegalHold = true
		case "OFF":
		default:
			return lock, errorf("InvalidArgument", "x-amz-object-lock-legal-hold must be ON or OFF, not %q.", v[0])
		}
	}
	return lock, nil
}

// checkWriteLock refuses a write that asks for a lock the requester may
// not set (s3:PutObjectRetention, s3:PutObjectLegalHold, as AWS asks
// for) or in a bucket without object lock.
func (s *server) checkWriteLock(r *http.Request, rq *request, lock store.ObjectLock) error {
	if lock.Mode == "" && !lock.LegalHold {
		return nil
	}
	if _, err := s.store.Locks().Config(rq.bucket); err != nil {
		return err
	}
	object := iam.ObjectARN(rq.bucket, rq.key)
	if lock.Mode != "" {
		if err := s.allowed(r, rq, "s3:PutObjectRetention", rq.bucket, object); err != nil {
			return err
		}
	}
	if lock.LegalHold {
		return s.allowed(r, rq, "s3:PutObjectLegalHold", rq.bucket, object)
	}
	return nil
}

// bypassGovernance tells whether the request asks to bypass GOVERNANCE
// retention of key and may (s3:BypassGovernanceRetention). Without the
// permission the request goes on without the bypass, as in AWS, so
// that only a version the bypass would have freed is refused.
func (s *server) bypassGovernance(r *http.Request, rq *request, key string) bool {
	if !strings.EqualFold(strings.TrimSpace(r.Header.Get(hdrBypass)), "true") {
		return false
	}
	if rq.root {
		return true
	}
	return s.decide(r, rq, "s3:BypassGovernanceRetention", rq.bucket, iam.ObjectARN(rq.bucket, key)).Allowed()
}

// setLockHeaders sends a version's lock on GET and HEAD.
func setLockHeaders(h http.Header, lock store.ObjectLock) {
	if lock.Mode != "" {
		h.Set(hdrLockMode, lock.Mode)
		h.Set(hdrLockUntil, isoTime(lock.Until))
	}
	if lock.LegalHold {
		h.Set(hdrLegalHold, "ON")
	}
}
