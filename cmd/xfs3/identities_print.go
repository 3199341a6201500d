package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/xfs3/xfs3/s3api/admin"
	"github.com/xfs3/xfs3/s3api/iam"
)

// printUsers prints users, sorted, one line each:
//
//	USER   STATUS    POLICIES
//	alice  enabled   readwrite,photos-ro
//	bob    disabled  -
func printUsers(w io.Writer, users map[string]admin.UserInfo) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "USER\tSTATUS\tPOLICIES")
	for _, name := range sortedNames(users) {
		u := users[name]
		fmt.Fprintf(tw, "%s\t%s\t%s\n", name, u.Status, orDash(u.PolicyName))
	}
	tw.Flush()
}

// printUser prints one user as "Field: value" lines.
func printUser(w io.Writer, name string, u admin.UserInfo) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	fmt.Fprintf(tw, "User:\t%s\n", name)
	fmt.Fprintf(tw, "Status:\t%s\n", u.Status)
	fmt.Fprintf(tw, "Policies:\t%s\n", orDash(u.PolicyName))
	if !u.UpdatedAt.IsZero() {
		fmt.Fprintf(tw, "Updated:\t%s\n", u.UpdatedAt.UTC().Format(time.RFC3339))
	}
	tw.Flush()
}

// printPolicies prints the named policies, sorted, one line each: its
// type, canned (built in, cannot be changed) or custom, and the users
// it is attached to.
//
//	POLICY        TYPE    USERS
//	consoleAdmin  canned  -
//	photos-ro     custom  alice,bob
func printPolicies(w io.Writer, names []string, users map[string][]string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "POLICY\tTYPE\tUSERS")
	for _, name := range names {
		kind := "custom"
		if slices.Contains(iam.CannedNames(), name) {
			kind = "canned"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", name, kind, orDash(strings.Join(users[name], ",")))
	}
	tw.Flush()
}

// printPolicyDoc prints a policy document indented by two spaces.
func printPolicyDoc(w io.Writer, doc []byte) error {
	var b bytes.Buffer
	if err := json.Indent(&b, doc, "", "  "); err != nil {
		return fmt.Errorf("the server's policy document: %w", err)
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}

// printAccountKeys prints a new service account's keys, the only time
// its secret key is shown.
func printAccountKeys(w io.Writer, c admin.Credentials) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	fmt.Fprintf(tw, "Access key:\t%s\n", c.AccessKey)
	fmt.Fprintf(tw, "Secret key:\t%s\n", c.SecretKey)
	fmt.Fprintf(tw, "Expiration:\t%s\n", formatExpiration(c.Expiration))
	tw.Flush()
}

// printAccounts prints service accounts, sorted by access key:
//
//	ACCESS KEY            STATUS   POLICY     EXPIRATION
//	Q3AM3UQ867SPQQA43P2F  enabled  inherited  never
//
// POLICY is "own" when the account has a policy of its own, "inherited"
// when it has its user's rights.
func printAccounts(w io.Writer, accounts []admin.ServiceAccount) {
	accounts = slices.Clone(accounts)
	slices.SortFunc(accounts, func(a, b admin.ServiceAccount) int { return strings.Compare(a.AccessKey, b.AccessKey) })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ACCESS KEY\tSTATUS\tPOLICY\tEXPIRATION")
	for _, a := range accounts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", a.AccessKey, accountStatus(a.AccountStatus), policySource(a.ImpliedPolicy), formatExpiration(a.Expiration))
	}
	tw.Flush()
}

// printAccount prints one service account as "Field: value" lines, then
// its policy (its own, or the one it inherits).
func printAccount(w io.Writer, key string, a admin.ServiceAccountInfo) error {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	fmt.Fprintf(tw, "Access key:\t%s\n", key)
	fmt.Fprintf(tw, "User:\t%s\n", a.ParentUser)
	fmt.Fprintf(tw, "Status:\t%s\n", accountStatus(a.AccountStatus))
	if a.Name != "" {
		fmt.Fprintf(tw, "Name:\t%s\n", a.Name)
	}
	if a.Description != "" {
		fmt.Fprintf(tw, "Description:\t%s\n", a.Description)
	}
	fmt.Fprintf(tw, "Expiration:\t%s\n", formatExpiration(a.Expiration))
	fmt.Fprintf(tw, "Policy:\t%s\n", policySource(a.ImpliedPolicy))
	tw.Flush()
	if a.Policy == "" {
		return nil
	}
	return printPolicyDoc(w, []byte(a.Policy))
}

// accountStatus writes a service account's "on" or "off" as users'
// statuses are written.
func accountStatus(s string) string {
	enabled, err := admin.ParseStatus(s)
	if err != nil {
		return s
	}
	return admin.UserStatus(enabled)
}

func policySource(implied bool) string {
	if implied {
		return "inherited"
	}
	return "own"
}

// formatExpiration is "never" or the time (RFC 3339, UTC).
func formatExpiration(t *time.Time) string {
	exp := admin.Expiration(t)
	if exp.IsZero() {
		return "never"
	}
	return exp.Format(time.RFC3339)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}
