package identity

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xfs3/xfs3/s3api/iam"
)

// memStorage keeps the document in memory; failNext makes the next save
// fail.
type memStorage struct {
	doc      []byte
	failNext bool
	saves    int
}

func (m *memStorage) Load() ([]byte, error) { return m.doc, nil }

func (m *memStorage) Save(doc []byte) error {
	if m.failNext {
		m.failNext = false
		return errors.New("disk on fire")
	}
	m.doc = bytes.Clone(doc)
	m.saves++
	return nil
}

const (
	rootAK = "ROOTACCESSKEY"
	rootSK = "root-secret-key-0123"
)

var testNow = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)

func open(t *testing.T, m *memStorage, ak, sk string) *Directory {
	t.Helper()
	d, err := Open(m, ak, sk, func() time.Time { return testNow })
	if err != nil {
		t.Fatal(err)
	}
	return d
}

const bucketPolicyDoc = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"]}]}`

func TestUsersAndPolicies(t *testing.T) {
	m := &memStorage{}
	d := open(t, m, rootAK, rootSK)
	if err := d.SetPolicy("bonly", []byte(bucketPolicyDoc)); err != nil {
		t.Fatal(err)
	}
	if err := d.AddUser("alice", "alice-secret", true); err != nil {
		t.Fatal(err)
	}
	if got, err := d.Attach("alice", "bonly", "readonly"); err != nil || !slices.Equal(got, []string{"bonly", "readonly"}) {
		t.Fatalf("attach: %v, %v", got, err)
	}
	if _, err := d.Attach("alice", "bonly"); !errors.Is(err, ErrNoChange) {
		t.Errorf("attach again: %v", err)
	}
	if _, err := d.Attach("alice", "nope"); !errors.Is(err, ErrNoSuchPolicy) {
		t.Errorf("attach unknown: %v", err)
	}
	id, ok := d.Lookup("alice")
	if !ok || id.SecretKey != "alice-secret" || id.Kind != KindUser || len(id.Policies) != 2 || id.Usable(testNow) != nil {
		t.Fatalf("lookup: %+v", id)
	}
	allowed := func(id *Identity, action, res string) bool {
		return id.Decide(iam.Request{Action: action, Resource: res, Principals: id.Principals(), Context: iam.Context{}}, nil).Allowed()
	}
	if !allowed(id, "s3:PutObject", "arn:aws:s3:::b/k") || allowed(id, "s3:PutObject", "arn:aws:s3:::c/k") || !allowed(id, "s3:GetObject", "arn:aws:s3:::c/k") {
		t.Error("alice's rights are not bonly+readonly")
	}

	// Refusals change nothing.
	saves := m.saves
	for _, err := range []error{
		d.AddUser(rootAK, "whatever-1", true),
		d.AddUser("x", "short-ok-secret", true),
		d.AddUser("a/b", "long-enough", true),
		d.AddUser("carol", "short", true),
		d.SetPolicy("readwrite", []byte(bucketPolicyDoc)),
		d.SetPolicy("bad", []byte(`{"Statement":[]}`)),
		d.SetPolicy("a,b", []byte(bucketPolicyDoc)),
		d.RemoveUser("nobody"),
		d.RemovePolicy("nope"),
		d.RemovePolicy("readonly"),
	} {
		if err == nil {
			t.Error("a bad change was accepted")
		}
	}
	if m.saves != saves {
		t.Errorf("refused changes saved %d times", m.saves-saves)
	}

	// A failed save publishes nothing.
	m.failNext = true
	if err := d.SetUserStatus("alice", false); err == nil {
		t.Fatal("the save failed but the change succeeded")
	}
	if id, _ := d.Lookup("alice"); id.Disabled {
		t.Error("a change whose save failed was published")
	}
	if err := d.SetUserStatus("alice", false); err != nil {
		t.Fatal(err)
	}
	if id, _ := d.Lookup("alice"); !errors.Is(id.Usable(testNow), ErrDisabled) {
		t.Error("disabled user usable")
	}

	// Replacing a policy changes its users at once; removing it detaches it.
	if err := d.SetPolicy("bonly", []byte(strings.ReplaceAll(bucketPolicyDoc, ":::b", ":::c"))); err != nil {
		t.Fatal(err)
	}
	id, _ = d.Lookup("alice")
	if !allowed(id, "s3:PutObject", "arn:aws:s3:::c/k") || allowed(id, "s3:PutObject", "arn:aws:s3:::b/k") {
		t.Error("the replaced policy is not in force")
	}
	if err := d.RemovePolicy("bonly"); err != nil {
		t.Fatal(err)
	}
	if u, _ := d.User("alice"); !slices.Equal(u.Policies, []string{"readonly"}) {
		t.Errorf("after removing bonly alice has %v", u.Policies)
	}
}

func TestServiceAccounts(t *testing.T) {
	d := open(t, &memStorage{}, rootAK, rootSK)
	if err := d.SetPolicy("bonly", []byte(bucketPolicyDoc)); err != nil {
		t.Fatal(err)
	}
	if err := d.AddUser("alice", "alice-secret", true); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Attach("alice", "bonly"); err != nil {
		t.Fatal(err)
	}
	readAll := []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"*"}]}`)
	creds, err := d.AddServiceAccount(AccountRequest{Parent: "alice", Policy: readAll, Expiration: testNow.Add(time.Hour)})
	if err != nil || len(creds.AccessKey) != generatedAccessKey || len(creds.SecretKey) != generatedSecretKey {
		t.Fatalf("add: %+v, %v", creds, err)
	}
	id, _ := d.Lookup(creds.AccessKey)
	decide := func(id *Identity, action, res string) bool {
		return id.Decide(iam.Request{Action: action, Resource: res, Context: iam.Context{}}, nil).Allowed()
	}
	switch {
	case !decide(id, "s3:GetObject", "arn:aws:s3:::b/k"):
		t.Error("inline ∩ parent should allow GetObject in b")
	case decide(id, "s3:PutObject", "arn:aws:s3:::b/k"):
		t.Error("the inline policy should refuse PutObject")
	case decide(id, "s3:GetObject", "arn:aws:s3:::c/k"):
		t.Error("the parent's policies should refuse bucket c")
	}
	if !errors.Is(id.Usable(testNow.Add(2*time.Hour)), ErrExpired) || id.Usable(testNow) != nil {
		t.Error("expiration not applied")
	}
	if err := d.SetUserStatus("alice", false); err != nil {
		t.Fatal(err)
	}
	if id, _ := d.Lookup(creds.AccessKey); !id.Disabled {
		t.Error("an account of a disabled user is usable")
	}
	if _, err := d.AddServiceAccount(AccountRequest{Parent: "alice", AccessKey: "alice"}); !errors.Is(err, ErrAccessKeyInUse) {
		t.Errorf("account over a user's key: %v", err)
	}
	if _, err := d.AddServiceAccount(AccountRequest{Parent: "nobody"}); !errors.Is(err, ErrNoSuchUser) {
		t.Errorf("account of nobody: %v", err)
	}
	rootAcct, err := d.AddServiceAccount(AccountRequest{Parent: rootAK, AccessKey: "ROOTSVC"})
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := d.Lookup(rootAcct.AccessKey); !id.Root || !decide(id, "s3:DeleteBucket", "arn:aws:s3:::any") {
		t.Error("a root account without a policy may do anything")
	}
	if err := d.RemoveUser("alice"); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Lookup(creds.AccessKey); ok {
		t.Error("removing a user kept its service account")
	}
	on, secret, empty := true, "new-secret-key", []byte{}
	if err := d.UpdateServiceAccount("ROOTSVC", AccountUpdate{Enabled: &on, SecretKey: &secret, Policy: &empty}); err != nil {
		t.Fatal(err)
	}
	if id, _ := d.Lookup("ROOTSVC"); id.SecretKey != secret || id.Session != nil {
		t.Errorf("update: %+v", id)
	}
}

// TestSealing: secrets are unreadable in the stored document, survive a
// reopen, are sealed after the root credentials change and are usable
// again once reset or once the old root returns.
func TestSealing(t *testing.T) {
	m := &memStorage{}
	d := open(t, m, rootAK, rootSK)
	if err := d.AddUser("alice", "alice-secret-value", true); err != nil {
		t.Fatal(err)
	}
	if err := d.AddUser("bob", "bob-secret-value", true); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(m.doc, []byte("secret-value")) {
		t.Fatal("a secret key is stored in the clear")
	}
	if id, _ := open(t, m, rootAK, rootSK).Lookup("alice"); id.SecretKey != "alice-secret-value" {
		t.Errorf("after reopen: %+v", id)
	}
	d = open(t, m, "OTHERROOT", "other-root-secret")
	if d.SealedKeys() != 2 {
		t.Errorf("SealedKeys = %d, want 2", d.SealedKeys())
	}
	if id, _ := d.Lookup("alice"); !errors.Is(id.Usable(testNow), ErrSealed) || id.SecretKey != "" {
		t.Errorf("sealed alice: %+v", id)
	}
	if err := d.AddUser("alice", "alice-new-secret", true); err != nil {
		t.Fatal(err)
	}
	if id, _ := d.Lookup("alice"); id.Usable(testNow) != nil || id.SecretKey != "alice-new-secret" {
		t.Errorf("reset alice: %+v", id)
	}
	old := open(t, m, rootAK, rootSK)
	if id, _ := old.Lookup("bob"); id.SecretKey != "bob-secret-value" {
		t.Errorf("bob under the old root: %+v", id)
	}
	// A sealed secret moved to another entry does not open.
	doc := strings.Replace(string(m.doc), `"alice"`, `"mallory"`, 1)
	if id, ok := open(t, &memStorage{doc: []byte(doc)}, "OTHERROOT", "other-root-secret").Lookup("mallory"); !ok || !id.Sealed {
		t.Errorf("a secret moved to another key opened: %+v", id)
	}
}

func TestOpenRefusesDamage(t *testing.T) {
	for name, doc := range map[string]string{
		"not json":      "{",
		"newer format":  `{"format":2}`,
		"bad policy":    `{"format":1,"policies":{"p":{"policy":{"Statement":[]}}}}`,
		"policy string": `{"format":1,"policies":{"p":{"policy":"x"}}}`,
	} {
		if _, err := Open(&memStorage{doc: []byte(doc)}, rootAK, rootSK, nil); err == nil {
			t.Errorf("%s: opened", name)
		}
	}
}

// TestRandomChanges applies random changes and checks after each that
// the directory agrees with a simple model, and that a reopened copy of
// the stored document agrees too.
func TestRandomChanges(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, seed))
			m := &memStorage{}
			d := open(t, m, rootAK, rootSK)
			type user struct {
				secret   string
				enabled  bool
				policies []string
			}
			model := map[string]*user{}
			names := []string{"user1", "user2", "user3"}
			pols := []string{"readonly", "writeonly", "p1"}
			if err := d.SetPolicy("p1", []byte(bucketPolicyDoc)); err != nil {
				t.Fatal(err)
			}
			for step := 0; step < 300; step++ {
				u := names[rng.IntN(len(names))]
				p := pols[rng.IntN(len(pols))]
				mu := model[u]
				var err error // refusals (no such user, no change) leave the model as it is too
				switch rng.IntN(5) {
				case 0:
					sec := fmt.Sprintf("secret-%d-%d", step, rng.IntN(1000))
					if err := d.AddUser(u, sec, true); err != nil {
						t.Fatal(err)
					}
					if mu == nil {
						mu = &user{}
						model[u] = mu
					}
					mu.secret, mu.enabled = sec, true
				case 1:
					err = d.RemoveUser(u)
					delete(model, u)
				case 2:
					_, err = d.Attach(u, p)
					if mu != nil && !slices.Contains(mu.policies, p) {
						mu.policies = append(mu.policies, p)
					}
				case 3:
					_, err = d.Detach(u, p)
					if mu != nil {
						mu.policies = slices.DeleteFunc(mu.policies, func(q string) bool { return q == p })
					}
				case 4:
					en := rng.IntN(2) == 0
					err = d.SetUserStatus(u, en)
					if mu != nil {
						mu.enabled = en
					}
				}
				if err != nil && !errors.Is(err, ErrNoSuchUser) && !errors.Is(err, ErrNoChange) {
					t.Fatalf("step %d: %v", step, err)
				}
				for _, check := range []*Directory{d, open(t, &memStorage{doc: m.doc}, rootAK, rootSK)} {
					for _, name := range names {
						mu := model[name]
						id, ok := check.Lookup(name)
						if ok != (mu != nil) {
							t.Fatalf("step %d: %s exists %v, model %v", step, name, ok, mu != nil)
						}
						if !ok {
							continue
						}
						info, _ := check.User(name)
						if id.SecretKey != mu.secret || id.Disabled == mu.enabled || !slices.Equal(info.Policies, mu.policies) {
							t.Fatalf("step %d: %s is %+v %+v, model %+v", step, name, id, info, mu)
						}
					}
				}
			}
		})
	}
}

// FuzzDocument: any stored document opens or is refused with an error,
// never a panic, and one that opens saves back to a document that opens
// to the same users.
func FuzzDocument(f *testing.F) {
	m := &memStorage{}
	d, err := Open(m, rootAK, rootSK, nil)
	if err != nil {
		f.Fatal(err)
	}
	d.SetPolicy("p1", []byte(bucketPolicyDoc))
	d.AddUser("alice", "alice-secret", true)
	d.Attach("alice", "p1", "readonly")
	d.AddServiceAccount(AccountRequest{Parent: "alice", AccessKey: "svc1", SecretKey: "svc1-secret", Policy: []byte(bucketPolicyDoc)})
	f.Add(m.doc)
	f.Add([]byte(`{"format":1}`))
	f.Add([]byte(`{"format":1,"users":{"x":null}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		m := &memStorage{doc: doc}
		d, err := Open(m, rootAK, rootSK, nil)
		if err != nil {
			return
		}
		users := d.Users()
		if err := d.AddUser("fuzz-user", "fuzz-secret", true); err != nil {
			return // refusals (the name taken by a service account) are fine
		}
		again, err := Open(&memStorage{doc: m.doc}, rootAK, rootSK, nil)
		if err != nil {
			t.Fatalf("a saved document does not open: %v", err)
		}
		if got := again.Users(); len(got) != len(users)+1 && len(got) != len(users) {
			t.Fatalf("users %d, then %d", len(users), len(got))
		}
	})
}
