package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/xfs3/xfs3/s3api/admin/sealed"
)

// Paths of MinIO's identity API (see the package doc's table), below
// Prefix.
const (
	PathAddUser               = "/add-user"
	PathRemoveUser            = "/remove-user"
	PathListUsers             = "/list-users"
	PathUserInfo              = "/user-info"
	PathSetUserStatus         = "/set-user-status"
	PathListAccessKeys        = "/list-access-keys-bulk"
	PathAddPolicy             = "/add-canned-policy"
	PathRemovePolicy          = "/remove-canned-policy"
	PathListPolicies          = "/list-canned-policies"
	PathPolicyInfo            = "/info-canned-policy"
	PathAttachPolicy          = "/idp/builtin/policy/attach"
	PathDetachPolicy          = "/idp/builtin/policy/detach"
	PathPolicyEntities        = "/idp/builtin/policy-entities"
	PathAddServiceAccount     = "/add-service-account"
	PathUpdateServiceAccount  = "/update-service-account"
	PathServiceAccountInfo    = "/info-service-account"
	PathListServiceAccounts   = "/list-service-accounts"
	PathDeleteServiceAccount  = "/delete-service-account"
	maxIdentityRequest        = 64 << 10
	statusEnabled, statusOn   = "enabled", "on"
	statusDisabled, statusOff = "disabled", "off"
)

// NoExpiration is how MinIO's wire writes "never expires".
var NoExpiration = time.Unix(0, 0).UTC()

// Expiration reads a wire expiration: nil and NoExpiration are never.
func Expiration(t *time.Time) time.Time {
	if t == nil || t.Equal(NoExpiration) {
		return time.Time{}
	}
	return t.UTC()
}

// WireExpiration writes an expiration as MinIO does.
func WireExpiration(t time.Time) *time.Time {
	if t.IsZero() {
		return &NoExpiration
	}
	t = t.UTC()
	return &t
}

// UserStatus is "enabled" or "disabled".
func UserStatus(enabled bool) string {
	if enabled {
		return statusEnabled
	}
	return statusDisabled
}

// AccountStatus is "on" or "off".
func AccountStatus(enabled bool) string {
	if enabled {
		return statusOn
	}
	return statusOff
}

// ParseStatus reads a user's or account's status.
func ParseStatus(s string) (enabled bool, err error) {
	switch s {
	case statusEnabled, statusOn:
		return true, nil
	case statusDisabled, statusOff:
		return false, nil
	}
	return false, invalid(fmt.Sprintf("status %q is not enabled, disabled, on or off", s))
}

// AddUserRequest is add-user's body (sealed).
type AddUserRequest struct {
	SecretKey string `json:"secretKey"`
	Status    string `json:"status"`
}

// UserInfo is a user as list-users and user-info answer it.
type UserInfo struct {
	SecretKey  string    `json:"secretKey,omitempty"`
	PolicyName string    `json:"policyName,omitempty"` // attached policies joined by ','
	Status     string    `json:"status"`
	MemberOf   []string  `json:"memberOf,omitempty"`
	UpdatedAt  time.Time `json:"updatedAt,omitzero"`
}

// PolicyInfo is info-canned-policy's answer with v=2.
type PolicyInfo struct {
	PolicyName string          `json:"PolicyName"`
	Policy     json.RawMessage `json:"Policy"`
	CreateDate time.Time       `json:"CreateDate,omitzero"`
	UpdateDate time.Time       `json:"UpdateDate,omitzero"`
}

// PolicyAssociation is the sealed body of attach and detach.
type PolicyAssociation struct {
	Policies []string `json:"policies"`
	User     string   `json:"user,omitempty"`
	Group    string   `json:"group,omitempty"`
}

// PolicyAssociationResult is the sealed answer of attach and detach.
type PolicyAssociationResult struct {
	PoliciesAttached []string  `json:"policiesAttached,omitempty"`
	PoliciesDetached []string  `json:"policiesDetached,omitempty"`
	UpdatedAt        time.Time `json:"updatedAt"`
}

// PolicyEntities is policy-entities' sealed answer.
type PolicyEntities struct {
	Timestamp      time.Time       `json:"timestamp"`
	UserMappings   []UserPolicies  `json:"userMappings,omitempty"`
	PolicyMappings []PolicyMapping `json:"policyMappings,omitempty"`
}

// UserPolicies are the policies attached to one user.
type UserPolicies struct {
	User     string   `json:"user"`
	Policies []string `json:"policies"`
}

// PolicyMapping lists the users a policy is attached to.
type PolicyMapping struct {
	Policy string   `json:"policy"`
	Users  []string `json:"users"`
}

// AddServiceAccountRequest is add-service-account's sealed body.
type AddServiceAccountRequest struct {
	Policy      json.RawMessage `json:"policy,omitempty"`
	TargetUser  string          `json:"targetUser,omitempty"`
	AccessKey   string          `json:"accessKey,omitempty"`
	SecretKey   string          `json:"secretKey,omitempty"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Expiration  *time.Time      `json:"expiration,omitempty"`
}

// Credentials are a new service account's keys.
type Credentials struct {
	AccessKey  string     `json:"accessKey"`
	SecretKey  string     `json:"secretKey"`
	Expiration *time.Time `json:"expiration,omitempty"`
}

// AddServiceAccountResult is add-service-account's sealed answer.
type AddServiceAccountResult struct {
	Credentials Credentials `json:"credentials"`
}

// UpdateServiceAccountRequest is update-service-account's sealed body;
// empty fields change nothing.
type UpdateServiceAccountRequest struct {
	NewPolicy      json.RawMessage `json:"newPolicy,omitempty"`
	NewSecretKey   string          `json:"newSecretKey,omitempty"`
	NewStatus      string          `json:"newStatus,omitempty"`
	NewName        string          `json:"newName,omitempty"`
	NewDescription string          `json:"newDescription,omitempty"`
	NewExpiration  *time.Time      `json:"newExpiration,omitempty"`
}

// ServiceAccount is a service account in list-service-accounts and
// list-access-keys-bulk answers.
type ServiceAccount struct {
	ParentUser    string     `json:"parentUser"`
	AccountStatus string     `json:"accountStatus"`
	ImpliedPolicy bool       `json:"impliedPolicy"`
	AccessKey     string     `json:"accessKey"`
	Name          string     `json:"name,omitempty"`
	Description   string     `json:"description,omitempty"`
	Expiration    *time.Time `json:"expiration,omitempty"`
}

// ServiceAccounts is list-service-accounts' sealed answer.
type ServiceAccounts struct {
	Accounts []ServiceAccount `json:"accounts"`
}

// ServiceAccountInfo is info-service-account's sealed answer: Policy is
// the account's own policy, or with ImpliedPolicy its parent's, as a
// JSON string.
type ServiceAccountInfo struct {
	ParentUser    string     `json:"parentUser"`
	AccountStatus string     `json:"accountStatus"`
	ImpliedPolicy bool       `json:"impliedPolicy"`
	Policy        string     `json:"policy"`
	Name          string     `json:"name,omitempty"`
	Description   string     `json:"description,omitempty"`
	Expiration    *time.Time `json:"expiration,omitempty"`
}

// AccessKeys are one user's keys in list-access-keys-bulk's answer.
type AccessKeys struct {
	ServiceAccounts []ServiceAccount `json:"serviceAccounts"`
	STSKeys         []ServiceAccount `json:"stsKeys"`
}

// OpenRequest reads a sealed request body of at most 64 KiB, sealed with
// the caller's secret key.
func OpenRequest(body []byte, secretKey string, v any) error {
	if len(body) > maxIdentityRequest+sealed.SealedSize(0)+1024 {
		return invalid("the request body is over 64 KiB")
	}
	plain, err := sealed.OpenLimit(secretKey, body, maxIdentityRequest)
	if err != nil {
		return &Error{Status: http.StatusBadRequest, Code: "XMinioAdminConfigBadJSON",
			Message: "The request body could not be decrypted with the caller's secret key: " + err.Error()}
	}
	if err := json.Unmarshal(plain, v); err != nil {
		return &Error{Status: http.StatusBadRequest, Code: "XMinioAdminConfigBadJSON", Message: "The request body is not the JSON expected: " + err.Error()}
	}
	return nil
}

// Client side of the identity API, as mc drives it.

// doSealed sends in sealed with the client's secret key (when not nil)
// and decodes a sealed answer into out (when not nil).
func (c *Client) doSealed(ctx context.Context, method, path string, query url.Values, in, out any) error {
	var body []byte
	if in != nil {
		plain, err := json.Marshal(in)
		if err != nil {
			return err
		}
		if body, err = sealed.Seal(c.SecretKey, plain); err != nil {
			return err
		}
	}
	answer, err := c.send(ctx, method, path, query, body, false)
	if err != nil || out == nil {
		return err
	}
	plain, err := sealed.OpenLimit(c.SecretKey, answer, maxAnswer)
	if err != nil {
		return fmt.Errorf("%s %s: open the sealed answer: %w", method, path, err)
	}
	return json.Unmarshal(plain, out)
}

// AddUser creates a user or sets its secret key and status.
func (c *Client) AddUser(ctx context.Context, accessKey, secretKey string, enabled bool) error {
	return c.doSealed(ctx, http.MethodPut, PathAddUser, url.Values{"accessKey": {accessKey}},
		AddUserRequest{SecretKey: secretKey, Status: UserStatus(enabled)}, nil)
}

// RemoveUser removes a user and its service accounts.
func (c *Client) RemoveUser(ctx context.Context, accessKey string) error {
	_, err := c.send(ctx, http.MethodDelete, PathRemoveUser, url.Values{"accessKey": {accessKey}}, nil, false)
	return err
}

// SetUserStatus enables or disables a user.
func (c *Client) SetUserStatus(ctx context.Context, accessKey string, enabled bool) error {
	_, err := c.send(ctx, http.MethodPut, PathSetUserStatus,
		url.Values{"accessKey": {accessKey}, "status": {UserStatus(enabled)}}, nil, false)
	return err
}

// ListUsers lists the users by access key.
func (c *Client) ListUsers(ctx context.Context) (map[string]UserInfo, error) {
	var out map[string]UserInfo
	err := c.doSealed(ctx, http.MethodGet, PathListUsers, nil, nil, &out)
	return out, err
}

// UserInfo describes one user.
func (c *Client) UserInfo(ctx context.Context, accessKey string) (UserInfo, error) {
	var out UserInfo
	err := c.do(ctx, http.MethodGet, PathUserInfo, url.Values{"accessKey": {accessKey}}, nil, &out)
	return out, err
}

// AddPolicy creates or replaces a named policy.
func (c *Client) AddPolicy(ctx context.Context, name string, policy []byte) error {
	_, err := c.send(ctx, http.MethodPut, PathAddPolicy, url.Values{"name": {name}}, policy, true)
	return err
}

// RemovePolicy removes a named policy.
func (c *Client) RemovePolicy(ctx context.Context, name string) error {
	_, err := c.send(ctx, http.MethodDelete, PathRemovePolicy, url.Values{"name": {name}}, nil, false)
	return err
}

// ListPolicies returns every named policy by name.
func (c *Client) ListPolicies(ctx context.Context) (map[string]json.RawMessage, error) {
	var out map[string]json.RawMessage
	err := c.do(ctx, http.MethodGet, PathListPolicies, nil, nil, &out)
	return out, err
}

// PolicyInfo describes a named policy.
func (c *Client) PolicyInfo(ctx context.Context, name string) (PolicyInfo, error) {
	var out PolicyInfo
	err := c.do(ctx, http.MethodGet, PathPolicyInfo, url.Values{"name": {name}, "v": {"2"}}, nil, &out)
	return out, err
}

// AttachPolicies attaches named policies to a user.
func (c *Client) AttachPolicies(ctx context.Context, user string, policies ...string) (PolicyAssociationResult, error) {
	var out PolicyAssociationResult
	err := c.doSealed(ctx, http.MethodPost, PathAttachPolicy, nil, PolicyAssociation{Policies: policies, User: user}, &out)
	return out, err
}

// DetachPolicies detaches named policies from a user.
func (c *Client) DetachPolicies(ctx context.Context, user string, policies ...string) (PolicyAssociationResult, error) {
	var out PolicyAssociationResult
	err := c.doSealed(ctx, http.MethodPost, PathDetachPolicy, nil, PolicyAssociation{Policies: policies, User: user}, &out)
	return out, err
}

// PolicyEntities returns the policies of users and the users of
// policies (all of them when neither is named).
func (c *Client) PolicyEntities(ctx context.Context, users, policies []string) (PolicyEntities, error) {
	var out PolicyEntities
	err := c.doSealed(ctx, http.MethodGet, PathPolicyEntities, url.Values{"user": users, "policy": policies}, nil, &out)
	return out, err
}

// AddServiceAccount creates a service account.
func (c *Client) AddServiceAccount(ctx context.Context, req AddServiceAccountRequest) (Credentials, error) {
	var out AddServiceAccountResult
	err := c.doSealed(ctx, http.MethodPut, PathAddServiceAccount, nil, req, &out)
	return out.Credentials, err
}

// UpdateServiceAccount changes a service account.
func (c *Client) UpdateServiceAccount(ctx context.Context, accessKey string, req UpdateServiceAccountRequest) error {
	return c.doSealed(ctx, http.MethodPost, PathUpdateServiceAccount, url.Values{"accessKey": {accessKey}}, req, nil)
}

// ServiceAccountInfo describes a service account.
func (c *Client) ServiceAccountInfo(ctx context.Context, accessKey string) (ServiceAccountInfo, error) {
	var out ServiceAccountInfo
	err := c.doSealed(ctx, http.MethodGet, PathServiceAccountInfo, url.Values{"accessKey": {accessKey}}, nil, &out)
	return out, err
}

// ListServiceAccounts lists a user's service accounts.
func (c *Client) ListServiceAccounts(ctx context.Context, user string) ([]ServiceAccount, error) {
	var out ServiceAccounts
	err := c.doSealed(ctx, http.MethodGet, PathListServiceAccounts, url.Values{"user": {user}}, nil, &out)
	return out.Accounts, err
}

// DeleteServiceAccount removes a service account.
func (c *Client) DeleteServiceAccount(ctx context.Context, accessKey string) error {
	_, err := c.send(ctx, http.MethodDelete, PathDeleteServiceAccount, url.Values{"accessKey": {accessKey}}, nil, false)
	return err
}

// ListAccessKeys lists every user's service accounts.
func (c *Client) ListAccessKeys(ctx context.Context) (map[string]AccessKeys, error) {
	var out map[string]AccessKeys
	err := c.doSealed(ctx, http.MethodGet, PathListAccessKeys, url.Values{"all": {"true"}, "listType": {"all"}}, nil, &out)
	return out, err
}

// JoinPolicies is how user answers list attached policies.
func JoinPolicies(names []string) string { return strings.Join(names, ",") }
