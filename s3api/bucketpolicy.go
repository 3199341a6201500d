package s3api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/xfs3/xfs3/s3api/iam"
	"github.com/xfs3/xfs3/store"
)

// A bucket's policy and public access block are kept by the store as
// documents (store.ConfigPolicy, store.ConfigPublicAccessBlock): the
// policy as the client sent it (GetBucketPolicy gives it back), the
// block as JSON. Requests by users and anonymous ones need them parsed:
// bucketAuths caches them until the store's configuration generation
// moves (any policy or block change, any bucket made or removed).

// publicAccessBlock is S3's PublicAccessBlockConfiguration.
type publicAccessBlock struct {
	XMLName               struct{} `xml:"PublicAccessBlockConfiguration" json:"-"`
	Xmlns                 string   `xml:"xmlns,attr,omitempty" json:"-"`
	BlockPublicAcls       bool
	IgnorePublicAcls      bool
	BlockPublicPolicy     bool
	RestrictPublicBuckets bool
}

// bucketAuthInfo is what authorization needs of one bucket.
type bucketAuthInfo struct {
	policy *iam.Policy // nil: none
	public bool        // policy.IsPublic()
	pab    publicAccessBlock
}

// bucketAuths caches bucketAuthInfo by bucket name.
type bucketAuths struct {
	mu  sync.RWMutex
	gen uint64
	m   map[string]*bucketAuthInfo
}

// bucketAuth returns a bucket's policy and block, from the cache when
// nothing changed since they were read. A bucket that cannot be read
// (missing, damaged) has neither: requests other than root's are then
// decided by identity policies alone, and the handler reports the error.
func (s *server) bucketAuth(bucket string) *bucketAuthInfo {
	if bucket == "" {
		return &bucketAuthInfo{}
	}
	cfg := s.store.BucketConfigs()
	gen := cfg.Generation()
	c := &s.bucketAuths
	c.mu.RLock()
	info, ok := c.m[bucket]
	fresh := c.gen == gen
	c.mu.RUnlock()
	if ok && fresh {
		return info
	}
	info = s.loadBucketAuth(cfg, bucket)
	c.mu.Lock()
	if c.gen != gen || c.m == nil {
		c.gen, c.m = gen, map[string]*bucketAuthInfo{}
	}
	c.m[bucket] = info
	c.mu.Unlock()
	return info
}

func (s *server) loadBucketAuth(cfg store.BucketConfigs, bucket string) *bucketAuthInfo {
	info := &bucketAuthInfo{}
	if doc, err := cfg.Get(bucket, store.ConfigPolicy); err == nil {
		p, err := iam.Parse(doc, iam.Bucket, 0)
		if err != nil {
			// Only valid policies are stored; one that no longer parses
			// (damage, a newer build's) grants nothing.
			s.log.Error().Str("bucket", bucket).Err(err).Msg("stored bucket policy does not parse; ignored")
		} else {
			p.Name = "bucket policy of " + bucket
			info.policy, info.public = p, p.IsPublic()
		}
	}
	if doc, err := cfg.Get(bucket, store.ConfigPublicAccessBlock); err == nil {
		if err := json.Unmarshal(doc, &info.pab); err != nil {
			// Fail closed: a block that cannot be read blocks everything.
			info.pab = publicAccessBlock{BlockPublicAcls: true, IgnorePublicAcls: true, BlockPublicPolicy: true, RestrictPublicBuckets: true}
		}
	}
	return info
}

// checkPolicyResources refuses a bucket policy that speaks of anything
// but its bucket and its objects, as S3 does.
func checkPolicyResources(p *iam.Policy, bucket string) error {
	arn := iam.BucketARN(bucket)
	for i, st := range p.Statements {
		for _, res := range append(append([]string(nil), st.Resource...), st.NotResource...) {
			if res != arn && !strings.HasPrefix(res, arn+"/") {
				return errorf("MalformedPolicy", "Policy has invalid resource: statement %d names %q, outside bucket %q.", i, res, bucket)
			}
		}
	}
	return nil
}

func (s *server) putBucketPolicy(w http.ResponseWriter, r *http.Request, rq *request) error {
	doc, err := readXMLBody(r, rq, int64(store.ConfigPolicy.MaxSize()))
	if err != nil {
		return err
	}
	p, err := iam.Parse(doc, iam.Bucket, iam.MaxBucketPolicySize)
	if err != nil {
		var pe *iam.PolicyError
		if errors.As(err, &pe) {
			return errorf("MalformedPolicy", "%s", pe.Error())
		}
		return &s3Error{code: "MalformedPolicy", cause: err}
	}
	if err := checkPolicyResources(p, rq.bucket); err != nil {
		return err
	}
	if p.IsPublic() && s.bucketAuth(rq.bucket).pab.BlockPublicPolicy {
		return errorf("AccessDenied", "The bucket's public access block (BlockPublicPolicy) refuses this public policy.")
	}
	if err := s.store.BucketConfigs().Put(rq.bucket, store.ConfigPolicy, doc); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *server) getBucketPolicy(w http.ResponseWriter, r *http.Request, rq *request) error {
	doc, err := s.store.BucketConfigs().Get(rq.bucket, store.ConfigPolicy)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(doc)
	return nil
}

func (s *server) deleteBucketPolicy(w http.ResponseWriter, r *http.Request, rq *request) error {
	if err := s.store.BucketConfigs().Delete(rq.bucket, store.ConfigPolicy); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// policyStatus is GetBucketPolicyStatus's answer.
type policyStatus struct {
	XMLName  struct{} `xml:"PolicyStatus"`
	Xmlns    string   `xml:"xmlns,attr"`
	IsPublic bool
}

func (s *server) getBucketPolicyStatus(w http.ResponseWriter, r *http.Request, rq *request) error {
	doc, err := s.store.BucketConfigs().Get(rq.bucket, store.ConfigPolicy)
	if err != nil {
		return err
	}
	p, err := iam.Parse(doc, iam.Bucket, 0)
	if err != nil {
		return err
	}
	writeXML(w, http.StatusOK, policyStatus{Xmlns: xmlns, IsPublic: p.IsPublic()})
	return nil
}

func (s *server) putPublicAccessBlock(w http.ResponseWriter, r *http.Request, rq *request) error {
	data, err := readXMLBody(r, rq, maxXMLBody)
	if err != nil {
		return err
	}
	var pab publicAccessBlock
	if err := decodeXML(data, &pab); err != nil {
		return err
	}
	doc, err := json.Marshal(pab)
	if err != nil {
		return err
	}
	if err := s.store.BucketConfigs().Put(rq.bucket, store.ConfigPublicAccessBlock, doc); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *server) getPublicAccessBlock(w http.ResponseWriter, r *http.Request, rq *request) error {
	doc, err := s.store.BucketConfigs().Get(rq.bucket, store.ConfigPublicAccessBlock)
	if errors.Is(err, store.ErrNoSuchConfig) {
		return errorf("NoSuchPublicAccessBlockConfiguration", "The public access block configuration was not found.")
	}
	if err != nil {
		return err
	}
	pab := publicAccessBlock{Xmlns: xmlns}
	if err := json.Unmarshal(doc, &pab); err != nil {
		return err
	}
	writeXML(w, http.StatusOK, pab)
	return nil
}

func (s *server) deletePublicAccessBlock(w http.ResponseWriter, r *http.Request, rq *request) error {
	if err := s.store.BucketConfigs().Delete(rq.bucket, store.ConfigPublicAccessBlock); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
