package s3api

import (
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"

	"github.com/xfs3/xfs3/s3api/admin"
	"github.com/xfs3/xfs3/s3api/admin/sealed"
	"github.com/xfs3/xfs3/s3api/iam"
	"github.com/xfs3/xfs3/s3api/identity"
)

// MinIO's identity admin API (mc admin user|policy|accesskey), served
// from identity.Directory. Bodies marked sealed in admin-wire.md are
// sealed with the caller's secret key both ways (package sealed).

// identityRoutes are the identity endpoints. self marks those a user may
// call for its own service accounts without an admin policy.
func (s *server) identityRoutes() []adminRoute {
	return []adminRoute{
		{name: "AdminAddUser", method: http.MethodPut, path: admin.PathAddUser, handler: s.addUser},
		{name: "AdminRemoveUser", method: http.MethodDelete, path: admin.PathRemoveUser, handler: s.removeUser},
		{name: "AdminListUsers", method: http.MethodGet, path: admin.PathListUsers, handler: s.listUsers},
		{name: "AdminUserInfo", method: http.MethodGet, path: admin.PathUserInfo, handler: s.userInfo},
		{name: "AdminEnableUser", method: http.MethodPut, path: admin.PathSetUserStatus, query: []string{"status", "enabled"}, handler: s.setUserStatus},
		{name: "AdminDisableUser", method: http.MethodPut, path: admin.PathSetUserStatus, query: []string{"status", "disabled"}, handler: s.setUserStatus},
		{name: "AdminListAccessKeys", method: http.MethodGet, path: admin.PathListAccessKeys, handler: s.listAccessKeys},
		{name: "AdminAddPolicy", method: http.MethodPut, path: admin.PathAddPolicy, handler: s.addPolicy},
		{name: "AdminRemovePolicy", method: http.MethodDelete, path: admin.PathRemovePolicy, handler: s.removePolicy},
		{name: "AdminListPolicies", method: http.MethodGet, path: admin.PathListPolicies, handler: s.listPolicies},
		{name: "AdminPolicyInfo", method: http.MethodGet, path: admin.PathPolicyInfo, handler: s.policyInfo},
		{name: "AdminAttachPolicy", method: http.MethodPost, path: admin.PathAttachPolicy, handler: s.attachPolicy},
		{name: "AdminDetachPolicy", method: http.MethodPost, path: admin.PathDetachPolicy, handler: s.detachPolicy},
		{name: "AdminPolicyEntities", method: http.MethodGet, path: admin.PathPolicyEntities, handler: s.policyEntities},
		{name: "AdminAddServiceAccount", method: http.MethodPut, path: admin.PathAddServiceAccount, handler: s.addServiceAccount, self: true},
		{name: "AdminUpdateServiceAccount", method: http.MethodPost, path: admin.PathUpdateServiceAccount, handler: s.updateServiceAccount, self: true},
		{name: "AdminServiceAccountInfo", method: http.MethodGet, path: admin.PathServiceAccountInfo, handler: s.serviceAccountInfo, self: true},
		{name: "AdminListServiceAccounts", method: http.MethodGet, path: admin.PathListServiceAccounts, handler: s.listServiceAccounts, self: true},
		{name: "AdminDeleteServiceAccount", method: http.MethodDelete, path: admin.PathDeleteServiceAccount, handler: s.deleteServiceAccount, self: true},
	}
}

// identityError maps the directory's errors to MinIO's admin errors.
func identityError(err error) error {
	var pe *iam.PolicyError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pe):
		return &admin.Error{Status: http.StatusBadRequest, Code: "XMinioMalformedIAMPolicy", Message: pe.Error()}
	case errors.Is(err, identity.ErrNoSuchUser):
		return &admin.Error{Status: http.StatusNotFound, Code: "XMinioAdminNoSuchUser", Message: err.Error()}
	case errors.Is(err, identity.ErrNoSuchPolicy):
		return &admin.Error{Status: http.StatusNotFound, Code: "XMinioAdminNoSuchPolicy", Message: err.Error()}
	case errors.Is(err, identity.ErrNoSuchServiceAccount):
		return &admin.Error{Status: http.StatusNotFound, Code: "XMinioAdminServiceAccountNotFound", Message: err.Error()}
	case errors.Is(err, identity.ErrInvalidAccessKey):
		return &admin.Error{Status: http.StatusBadRequest, Code: "XMinioAdminInvalidAccessKey", Message: err.Error()}
	case errors.Is(err, identity.ErrInvalidSecretKey):
		return &admin.Error{Status: http.StatusBadRequest, Code: "XMinioAdminInvalidSecretKey", Message: err.Error()}
	case errors.Is(err, identity.ErrNoChange):
		return &admin.Error{Status: http.StatusBadRequest, Code: "XMinioAdminPolicyChangeAlreadyApplied", Message: err.Error()}
	case errors.Is(err, identity.ErrAccessKeyInUse), errors.Is(err, identity.ErrCannedPolicy), errors.Is(err, identity.ErrInvalidArgument):
		return &admin.Error{Status: http.StatusBadRequest, Code: "XMinioAdminInvalidArgument", Message: err.Error()}
	}
	return err
}

// openSealed reads a request body sealed with the caller's secret key.
func (s *server) openSealed(r *http.Request, rq *request, v any) error {
	body, err := adminBody(r, rq)
	if err != nil {
		return err
	}
	return admin.OpenRequest(body, s.secretOf(rq), v)
}

// writeSealed answers v sealed with the caller's secret key.
func (s *server) writeSealed(w http.ResponseWriter, rq *request, v any) error {
	plain, err := json.Marshal(v)
	if err != nil {
		return err
	}
	out, err := sealed.Seal(s.secretOf(rq), plain)
	if err != nil {
		return err
	}
	writeBody(w, "application/octet-stream", out)
	return nil
}

// requiredQuery returns a query parameter that must be present.
func requiredQuery(r *http.Request, name string) (string, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return "", &admin.Error{Status: http.StatusBadRequest, Code: "XMinioAdminInvalidArgument", Message: "The query parameter " + name + " is required."}
	}
	return v, nil
}

func (s *server) addUser(w http.ResponseWriter, r *http.Request, rq *request) error {
	ak, err := requiredQuery(r, "accessKey")
	if err != nil {
		return err
	}
	var req admin.AddUserRequest
	if err := s.openSealed(r, rq, &req); err != nil {
		return err
	}
	enabled := true
	if req.Status != "" {
		if enabled, err = admin.ParseStatus(req.Status); err != nil {
			return err
		}
	}
	return identityError(s.identities.AddUser(ak, req.SecretKey, enabled))
}

func (s *server) removeUser(w http.ResponseWriter, r *http.Request, rq *request) error {
	ak, err := requiredQuery(r, "accessKey")
	if err != nil {
		return err
	}
	return identityError(s.identities.RemoveUser(ak))
}

func (s *server) setUserStatus(w http.ResponseWriter, r *http.Request, rq *request) error {
	ak, err := requiredQuery(r, "accessKey")
	if err != nil {
		return err
	}
	enabled, err := admin.ParseStatus(r.URL.Query().Get("status"))
	if err != nil {
		return err
	}
	return identityError(s.identities.SetUserStatus(ak, enabled))
}

func wireUser(u identity.UserInfo) admin.UserInfo {
	return admin.UserInfo{PolicyName: admin.JoinPolicies(u.Policies), Status: admin.UserStatus(u.Enabled), UpdatedAt: u.Updated}
}

func (s *server) listUsers(w http.ResponseWriter, r *http.Request, rq *request) error {
	out := map[string]admin.UserInfo{}
	for _, u := range s.identities.Users() {
		out[u.AccessKey] = wireUser(u)
	}
	return s.writeSealed(w, rq, out)
}

func (s *server) userInfo(w http.ResponseWriter, r *http.Request, rq *request) error {
	ak, err := requiredQuery(r, "accessKey")
	if err != nil {
		return err
	}
	u, err := s.identities.User(ak)
	if err != nil {
		return identityError(err)
	}
	return writeJSON(w, wireUser(u))
}

func (s *server) addPolicy(w http.ResponseWriter, r *http.Request, rq *request) error {
	name, err := requiredQuery(r, "name")
	if err != nil {
		return err
	}
	doc, err := adminBody(r, rq)
	if err != nil {
		return err
	}
	return identityError(s.identities.SetPolicy(name, doc))
}

func (s *server) removePolicy(w http.ResponseWriter, r *http.Request, rq *request) error {
	name, err := requiredQuery(r, "name")
	if err != nil {
		return err
	}
	return identityError(s.identities.RemovePolicy(name))
}

func (s *server) listPolicies(w http.ResponseWriter, r *http.Request, rq *request) error {
	out := map[string]*iam.Policy{}
	for _, p := range s.identities.Policies() {
		out[p.Name] = p.Policy
	}
	return writeJSON(w, out)
}

// policyInfo answers MinIO's v2 form (name, policy, dates), or the bare
// policy document to older clients that do not ask for v=2.
func (s *server) policyInfo(w http.ResponseWriter, r *http.Request, rq *request) error {
	name, err := requiredQuery(r, "name")
	if err != nil {
		return err
	}
	p, err := s.identities.PolicyInfo(name)
	if err != nil {
		return identityError(err)
	}
	if r.URL.Query().Get("v") != "2" {
		return writeJSON(w, p.Policy)
	}
	doc, err := json.Marshal(p.Policy)
	if err != nil {
		return err
	}
	return writeJSON(w, admin.PolicyInfo{PolicyName: p.Name, Policy: doc, CreateDate: p.Created, UpdateDate: p.Updated})
}

// policyAssociation reads an attach or detach: policies for one user
// (groups are refused: xfs3 has none).
func (s *server) policyAssociation(r *http.Request, rq *request) (admin.PolicyAssociation, error) {
	var req admin.PolicyAssociation
	if err := s.openSealed(r, rq, &req); err != nil {
		return req, err
	}
	switch {
	case req.Group != "":
		return req, &admin.Error{Status: http.StatusNotImplemented, Code: "NotImplemented", Message: "xfs3 has no groups: attach policies to users."}
	case req.User == "" || len(req.Policies) == 0:
		return req, &admin.Error{Status: http.StatusBadRequest, Code: "XMinioAdminInvalidArgument", Message: "A user and at least one policy are required."}
	}
	return req, nil
}

func (s *server) attachPolicy(w http.ResponseWriter, r *http.Request, rq *request) error {
	req, err := s.policyAssociation(r, rq)
	if err != nil {
		return err
	}
	done, err := s.identities.Attach(req.User, req.Policies...)
	if err != nil {
		return identityError(err)
	}
	return s.writeSealed(w, rq, admin.PolicyAssociationResult{PoliciesAttached: done, UpdatedAt: s.now().UTC()})
}

func (s *server) detachPolicy(w http.ResponseWriter, r *http.Request, rq *request) error {
	req, err := s.policyAssociation(r, rq)
	if err != nil {
		return err
	}
	done, err := s.identities.Detach(req.User, req.Policies...)
	if err != nil {
		return identityError(err)
	}
	return s.writeSealed(w, rq, admin.PolicyAssociationResult{PoliciesDetached: done, UpdatedAt: s.now().UTC()})
}

// policyEntities answers the policies of the users named and the users
// of the policies named; naming neither lists every mapping.
func (s *server) policyEntities(w http.ResponseWriter, r *http.Request, rq *request) error {
	q := r.URL.Query()
	users, policies := q["user"], q["policy"]
	all := len(users) == 0 && len(policies) == 0
	out := admin.PolicyEntities{Timestamp: s.now().UTC()}
	byPolicy := map[string][]string{}
	for _, u := range s.identities.Users() {
		if all || slices.Contains(users, u.AccessKey) {
			if len(u.Policies) > 0 {
				out.UserMappings = append(out.UserMappings, admin.UserPolicies{User: u.AccessKey, Policies: u.Policies})
			}
		}
		for _, p := range u.Policies {
			byPolicy[p] = append(byPolicy[p], u.AccessKey)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(byPolicy)) {
		if all || slices.Contains(policies, p) {
			out.PolicyMappings = append(out.PolicyMappings, admin.PolicyMapping{Policy: p, Users: byPolicy[p]})
		}
	}
	return s.writeSealed(w, rq, out)
}

// requester is the user a self-service call acts for: the caller's own
// name, or the root access key.
func (s *server) requester(rq *request) string {
	if rq.ident != nil {
		return rq.ident.User
	}
	return rq.auth.AccessKey
}

func (s *server) addServiceAccount(w http.ResponseWriter, r *http.Request, rq *request) error {
	var req admin.AddServiceAccountRequest
	if err := s.openSealed(r, rq, &req); err != nil {
		return err
	}
	parent := req.TargetUser
	if parent == "" {
		parent = s.requester(rq)
	}
	if err := s.authorizeAdmin(r, rq, parent); err != nil {
		return err
	}
	creds, err := s.identities.AddServiceAccount(identity.AccountRequest{
		Parent: parent, AccessKey: req.AccessKey, SecretKey: req.SecretKey, Policy: req.Policy,
		Name: req.Name, Description: req.Description, Expiration: admin.Expiration(req.Expiration),
	})
	if err != nil {
		return identityError(err)
	}
	return s.writeSealed(w, rq, admin.AddServiceAccountResult{Credentials: admin.Credentials{
		AccessKey: creds.AccessKey, SecretKey: creds.SecretKey, Expiration: admin.WireExpiration(creds.Expiration)}})
}

// account finds the service account named by ?accessKey= and checks the
// caller may manage it.
func (s *server) account(r *http.Request, rq *request) (identity.AccountInfo, error) {
	ak, err := requiredQuery(r, "accessKey")
	if err != nil {
		return identity.AccountInfo{}, err
	}
	a, err := s.identities.ServiceAccount(ak)
	if err != nil {
		if err := s.authorizeAdmin(r, rq, ""); err != nil {
			return a, err // do not tell a caller who may not know whether it exists
		}
		return a, identityError(err)
	}
	return a, s.authorizeAdmin(r, rq, a.Parent)
}

func (s *server) updateServiceAccount(w http.ResponseWriter, r *http.Request, rq *request) error {
	a, err := s.account(r, rq)
	if err != nil {
		return err
	}
	var req admin.UpdateServiceAccountRequest
	if err := s.openSealed(r, rq, &req); err != nil {
		return err
	}
	var u identity.AccountUpdate
	if req.NewSecretKey != "" {
		u.SecretKey = &req.NewSecretKey
	}
	if req.NewStatus != "" {
		enabled, err := admin.ParseStatus(req.NewStatus)
		if err != nil {
			return err
		}
		u.Enabled = &enabled
	}
	if len(req.NewPolicy) > 0 {
		doc := []byte(req.NewPolicy)
		if string(doc) == "null" || string(doc) == "{}" {
			doc = []byte{} // back to the parent's rights
		}
		u.Policy = &doc
	}
	if req.NewName != "" {
		u.Name = &req.NewName
	}
	if req.NewDescription != "" {
		u.Description = &req.NewDescription
	}
	if req.NewExpiration != nil {
		exp := admin.Expiration(req.NewExpiration)
		u.Expiration = &exp
	}
	if err := s.identities.UpdateServiceAccount(a.AccessKey, u); err != nil {
		return identityError(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *server) deleteServiceAccount(w http.ResponseWriter, r *http.Request, rq *request) error {
	a, err := s.account(r, rq)
	if err != nil {
		return err
	}
	if err := s.identities.DeleteServiceAccount(a.AccessKey); err != nil {
		return identityError(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *server) serviceAccountInfo(w http.ResponseWriter, r *http.Request, rq *request) error {
	a, err := s.account(r, rq)
	if err != nil {
		return err
	}
	out := admin.ServiceAccountInfo{
		ParentUser: a.Parent, AccountStatus: admin.AccountStatus(a.Enabled), Policy: string(a.Policy),
		Name: a.Name, Description: a.Description, Expiration: admin.WireExpiration(a.Expiration),
	}
	if a.Policy == nil {
		out.ImpliedPolicy = true
		out.Policy = s.impliedPolicy(a.Parent)
	}
	return s.writeSealed(w, rq, out)
}

// impliedPolicy is the policy a service account without its own has:
// its parent's attached policies merged into one document.
func (s *server) impliedPolicy(parent string) string {
	merged := iam.Policy{Version: iam.Version2012}
	if parent == s.rootAccessKey() {
		p, _ := iam.Canned(iam.ConsoleAdmin)
		merged.Statements = p.Statements
	} else if u, err := s.identities.User(parent); err == nil {
		for _, name := range u.Policies {
			if p, ok := s.identities.Policy(name); ok {
				merged.Statements = append(merged.Statements, p.Statements...)
			}
		}
	}
	for i := range merged.Statements {
		merged.Statements[i].Sid = "" // Sids of different policies may clash
	}
	doc, err := json.Marshal(merged)
	if err != nil || len(merged.Statements) == 0 {
		return ""
	}
	return string(doc)
}

func wireAccount(a identity.AccountInfo) admin.ServiceAccount {
	return admin.ServiceAccount{
		ParentUser: a.Parent, AccountStatus: admin.AccountStatus(a.Enabled), ImpliedPolicy: a.Policy == nil,
		AccessKey: a.AccessKey, Name: a.Name, Description: a.Description, Expiration: admin.WireExpiration(a.Expiration),
	}
}

func (s *server) listServiceAccounts(w http.ResponseWriter, r *http.Request, rq *request) error {
	user := r.URL.Query().Get("user")
	if user == "" {
		user = s.requester(rq)
	}
	if err := s.authorizeAdmin(r, rq, user); err != nil {
		return err
	}
	out := admin.ServiceAccounts{Accounts: []admin.ServiceAccount{}}
	for _, a := range s.identities.ServiceAccounts(user) {
		out.Accounts = append(out.Accounts, wireAccount(a))
	}
	return s.writeSealed(w, rq, out)
}

// listAccessKeys is list-access-keys-bulk: every user's service accounts
// (xfs3 has no STS keys).
func (s *server) listAccessKeys(w http.ResponseWriter, r *http.Request, rq *request) error {
	q := r.URL.Query()
	out := map[string]admin.AccessKeys{}
	for _, u := range s.identities.Users() {
		if q.Get("all") == "true" || slices.Contains(q["users"], u.AccessKey) {
			out[u.AccessKey] = admin.AccessKeys{ServiceAccounts: []admin.ServiceAccount{}}
		}
	}
	for _, a := range s.identities.ServiceAccounts("") {
		keys, ok := out[a.Parent]
		if !ok && q.Get("all") != "true" {
			continue
		}
		keys.ServiceAccounts = append(keys.ServiceAccounts, wireAccount(a))
		out[a.Parent] = keys
	}
	return s.writeSealed(w, rq, out)
}

// rootAccessKey is the access key that seals identities (New)
// and owns the buckets users see.
func (s *server) rootAccessKey() string { return s.owner }
