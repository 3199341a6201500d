package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xfs3/xfs3/s3api/admin"
)

// Users, service accounts and named policies of a running server, through
// MinIO's identity admin API (package admin's client), with mc's verbs:
// "xfs3 user", "xfs3 user svcacct" and "xfs3 policy". Each group is a
// table of verbs; a verb names its positional arguments, its own flags and
// what it does with a client.

// connectionUsage is the usage text of the flags that find a running
// server, shared by the commands that drive one.
const connectionUsage = `Connection (the settings of 'xfs3 serve', read the same way: flags, XFS3_*
environment, config file):
  --endpoint URL   the server (default: http://, or https:// with
                   XFS3_CERTS_DIR or "certs_dir", and the server's listen
                   address, XFS3_ADDR or "addr", 127.0.0.1:9000)
  --config FILE    the server's JSON config file (XFS3_CONFIG)
  --volume PATH    the server's volume (XFS3_VOLUME): when no keys are
                   configured, its credentials.json is read
Credentials: XFS3_ACCESS_KEY and XFS3_SECRET_KEY ("access_key",
"secret_key"), else the credentials.json the server keeps beside its
volume.
`

const userUsage = `Usage: xfs3 user <command> [flags] [arguments]

Users of a running server, through its admin API (signed as mc signs).
A user signs requests with its own keys and may do what the policies
attached to it allow ('xfs3 policy attach'). The same as 'mc admin user'.

Commands:
  add USER SECRET     create USER, or set its secret key and enable it
  rm USER             remove USER and its service accounts
  enable USER         let USER sign requests again
  disable USER        refuse USER's requests and its service accounts'
  ls                  every user: USER, STATUS, POLICIES ("-": none)
  info USER           one user: its status, policies, last change
  svcacct ...         USER's service accounts ('xfs3 user svcacct -h')

Flags of ls and info:
  --json     the admin API's JSON document instead

` + connectionUsage

const svcacctUsage = `Usage: xfs3 user svcacct <command> [flags] [arguments]

Service accounts of a running server's users: more keys for a user, each
with the user's rights or, with a policy of its own, fewer (never more).
The same as 'mc admin user svcacct'.

Commands:
  add USER            create one; prints its access key and secret key,
                      the only time the secret key is shown
      --access-key K  its access key (default: generated)
      --secret-key S  its secret key (default: generated)
      --policy FILE   a policy of its own (FILE "-": standard input)
      --expiry D      expires after D, e.g. 90d, 36h, 1h30m (default: never)
  ls USER             USER's accounts: ACCESS KEY, STATUS, POLICY ("own" or
                      "inherited" from the user), EXPIRATION
  info KEY            one account: its user, status, expiration and policy
  edit KEY            change an account:
      --secret-key S  a new secret key
      --policy FILE   a new policy of its own (FILE "-": standard input)
      --enable        let it sign requests again
      --disable       refuse its requests
  rm KEY              remove an account

Flags of add, ls and info:
  --json     the admin API's JSON document instead

` + connectionUsage

const policyUsage = `Usage: xfs3 policy <command> [flags] [arguments]

Named policies of a running server: IAM policy documents attached to users.
The canned ones (readwrite, readonly, writeonly, diagnostics, consoleAdmin)
are built in. The same as 'mc admin policy'.

Commands:
  create NAME FILE           create or replace NAME with the policy in FILE
                             ("-": standard input)
  rm NAME                    remove NAME (it must be attached to no user)
  ls                         every policy: POLICY, TYPE (canned or custom),
                             the USERS it is attached to ("-": none)
  info NAME                  NAME's policy document
  attach NAME... --user USER attach policies to USER
  detach NAME... --user USER detach policies from USER

Flags of ls:
  --json     the admin API's JSON document instead

` + connectionUsage

// idGroup is one command: "user", "user svcacct" or "policy".
type idGroup struct {
	name  string
	usage string
	verbs map[string]idVerb
	// sub are commands below this one ("user svcacct").
	sub map[string]*idGroup
}

// idVerb is one verb of a group.
type idVerb struct {
	min, max int    // positional arguments (max -1: any number)
	shape    string // their names, for usage errors
	flags    []string
	run      func(c *idCall, pos []string) error
}

// idOptions are the flags of every verb; each verb registers its own.
type idOptions struct {
	json                         bool
	user                         string
	accessKey, secretKey, policy string
	expiry                       string
	enable, disable              bool
	endpoint, configFile, volume string
}

func (o *idOptions) register(fs *flag.FlagSet, names ...string) {
	fs.StringVar(&o.endpoint, "endpoint", "", "server URL")
	fs.StringVar(&o.configFile, "config", "", "the server's config file")
	fs.StringVar(&o.volume, "volume", "", "the server's volume")
	for _, n := range names {
		switch n {
		case "json":
			fs.BoolVar(&o.json, n, false, "print the JSON document")
		case "user":
			fs.StringVar(&o.user, n, "", "the user")
		case "access-key":
			fs.StringVar(&o.accessKey, n, "", "access key")
		case "secret-key":
			fs.StringVar(&o.secretKey, n, "", "secret key")
		case "policy":
			fs.StringVar(&o.policy, n, "", "policy file")
		case "expiry":
			fs.StringVar(&o.expiry, n, "", "expires after")
		case "enable":
			fs.BoolVar(&o.enable, n, false, "enable")
		case "disable":
			fs.BoolVar(&o.disable, n, false, "disable")
		default:
			panic("identities: no flag " + n)
		}
	}
}

// idCall is one verb being run: its client, flags and streams.
type idCall struct {
	c   *admin.Client
	o   *idOptions
	e   *env
	ctx context.Context
}

var userGroup = &idGroup{name: "user", usage: userUsage, verbs: map[string]idVerb{
	"add":     {2, 2, "USER SECRET", nil, userAdd},
	"rm":      {1, 1, "USER", nil, userRm},
	"enable":  {1, 1, "USER", nil, func(c *idCall, pos []string) error { return userStatus(c, pos, true) }},
	"disable": {1, 1, "USER", nil, func(c *idCall, pos []string) error { return userStatus(c, pos, false) }},
	"ls":      {0, 0, "no arguments", []string{"json"}, userLs},
	"info":    {1, 1, "USER", []string{"json"}, userInfo},
}, sub: map[string]*idGroup{"svcacct": svcacctGroup}}

var svcacctGroup = &idGroup{name: "user svcacct", usage: svcacctUsage, verbs: map[string]idVerb{
	"add":  {1, 1, "USER", []string{"json", "access-key", "secret-key", "policy", "expiry"}, svcacctAdd},
	"ls":   {1, 1, "USER", []string{"json"}, svcacctLs},
	"info": {1, 1, "KEY", []string{"json"}, svcacctInfo},
	"edit": {1, 1, "KEY", []string{"secret-key", "policy", "enable", "disable"}, svcacctEdit},
	"rm":   {1, 1, "KEY", nil, svcacctRm},
}}

var policyGroup = &idGroup{name: "policy", usage: policyUsage, verbs: map[string]idVerb{
	"create": {2, 2, "NAME FILE", nil, policyCreate},
	"rm":     {1, 1, "NAME", nil, policyRm},
	"ls":     {0, 0, "no arguments", []string{"json"}, policyLs},
	"info":   {1, 1, "NAME", nil, policyInfo},
	"attach": {1, -1, "NAME... --user USER", []string{"user"}, func(c *idCall, pos []string) error { return policyAssociate(c, pos, true) }},
	"detach": {1, -1, "NAME... --user USER", []string{"user"}, func(c *idCall, pos []string) error { return policyAssociate(c, pos, false) }},
}}

func runUser(args []string, e *env) int   { return runIdGroup(userGroup, args, e) }
func runPolicy(args []string, e *env) int { return runIdGroup(policyGroup, args, e) }

// runIdGroup dispatches "xfs3 GROUP VERB ...".
func runIdGroup(g *idGroup, args []string, e *env) int {
	verb, rest := "", args
	if len(args) > 0 {
		verb, rest = g.verbOf(args)
	}
	switch verb {
	case "":
		fmt.Fprintf(e.stderr, "xfs3: %s: missing command\n\n%s", g.name, g.usage)
		return exitUsage
	case "-h", "-help", "--help", "help":
		fmt.Fprint(e.stdout, g.usage)
		return exitOK
	}
	if sub, ok := g.sub[verb]; ok {
		return runIdGroup(sub, rest, e)
	}
	v, ok := g.verbs[verb]
	if !ok {
		fmt.Fprintf(e.stderr, "xfs3: %s: unknown command %q\n\n%s", g.name, verb, g.usage)
		return exitUsage
	}
	return finish(v.call(g.name+" "+verb, rest, e), g.name+" "+verb, g.usage, e)
}

// verbOf finds the verb among args, which may follow flags ("xfs3 user
// --endpoint URL ls"), and returns it and the other arguments.
func (g *idGroup) verbOf(args []string) (string, []string) {
	if isHelp(args[0]) {
		return args[0], args[1:]
	}
	fs := newFlags(g.name) // every flag of every verb, to tell values from verbs
	var o idOptions
	seen := map[string]bool{}
	var names []string
	for _, v := range g.verbs {
		for _, n := range v.flags {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	o.register(fs, names...)
	return splitVerb(fs, args)
}

// call parses the verb's flags and arguments, makes the client and runs
// the verb.
func (v idVerb) call(name string, args []string, e *env) error {
	var o idOptions
	fs := newFlags(name)
	o.register(fs, v.flags...)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < v.min || v.max >= 0 && len(pos) > v.max {
		return usagef("want %s, got %s", v.shape, nargs(len(pos)))
	}
	if slices.Contains(v.flags, "user") && o.user == "" {
		return usagef("missing --user USER")
	}
	c, err := adminClient(o.endpoint, o.configFile, o.volume)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	return v.run(&idCall{c: c, o: &o, e: e, ctx: ctx}, pos)
}

func userAdd(c *idCall, pos []string) error {
	return c.c.AddUser(c.ctx, pos[0], pos[1], true)
}

func userRm(c *idCall, pos []string) error {
	return c.c.RemoveUser(c.ctx, pos[0])
}

func userStatus(c *idCall, pos []string, enabled bool) error {
	return c.c.SetUserStatus(c.ctx, pos[0], enabled)
}

func userLs(c *idCall, pos []string) error {
	users, err := c.c.ListUsers(c.ctx)
	if err != nil {
		return err
	}
	if c.o.json {
		return printJSON(c.e, users)
	}
	printUsers(c.e.stdout, users)
	return nil
}

func userInfo(c *idCall, pos []string) error {
	u, err := c.c.UserInfo(c.ctx, pos[0])
	if err != nil {
		return err
	}
	if c.o.json {
		return printJSON(c.e, u)
	}
	printUser(c.e.stdout, pos[0], u)
	return nil
}

// readPolicy reads a policy document from file ("-": standard input) and
// checks that it is JSON; the server judges the rest.
func readPolicy(e *env, file string) ([]byte, error) {
	var doc []byte
	var err error
	name := file
	if file == "-" {
		name = "standard input"
		doc, err = io.ReadAll(io.LimitReader(e.stdin, 1<<20))
	} else {
		doc, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return nil, fmt.Errorf("policy in %s is not JSON: %v", name, err)
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("policy in %s is not a JSON object", name)
	}
	return doc, nil
}

func svcacctAdd(c *idCall, pos []string) error {
	req := admin.AddServiceAccountRequest{TargetUser: pos[0], AccessKey: c.o.accessKey, SecretKey: c.o.secretKey}
	if c.o.policy != "" {
		doc, err := readPolicy(c.e, c.o.policy)
		if err != nil {
			return err
		}
		req.Policy = doc
	}
	if c.o.expiry != "" {
		d, err := parseExpiry(c.o.expiry)
		if err != nil {
			return usagef("--expiry: %v", err)
		}
		req.Expiration = admin.WireExpiration(time.Now().Add(d))
	}
	creds, err := c.c.AddServiceAccount(c.ctx, req)
	if err != nil {
		return err
	}
	if c.o.json {
		return printJSON(c.e, creds)
	}
	printAccountKeys(c.e.stdout, creds)
	return nil
}

// parseExpiry reads how long a service account lasts: a Go duration
// ("36h", "1h30m") with days allowed in front ("90d", "1d12h").
func parseExpiry(s string) (time.Duration, error) {
	bad := fmt.Errorf("%q: want a duration such as 90d, 36h or 1h30m", s)
	rest := strings.TrimSpace(s)
	var days int64
	if d, after, ok := strings.Cut(rest, "d"); ok {
		n, err := strconv.ParseInt(d, 10, 64)
		if err != nil || n < 0 || n > 100*366 {
			return 0, bad
		}
		days, rest = n, after
	}
	var d time.Duration
	if rest != "" {
		var err error
		if d, err = time.ParseDuration(rest); err != nil || d < 0 {
			return 0, bad
		}
	}
	d += time.Duration(days) * 24 * time.Hour
	if d < time.Second {
		return 0, fmt.Errorf("%q is less than a second", s)
	}
	return d, nil
}

func svcacctLs(c *idCall, pos []string) error {
	accounts, err := c.c.ListServiceAccounts(c.ctx, pos[0])
	if err != nil {
		return err
	}
	if c.o.json {
		return printJSON(c.e, admin.ServiceAccounts{Accounts: accounts})
	}
	printAccounts(c.e.stdout, accounts)
	return nil
}

func svcacctInfo(c *idCall, pos []string) error {
	a, err := c.c.ServiceAccountInfo(c.ctx, pos[0])
	if err != nil {
		return err
	}
	if c.o.json {
		return printJSON(c.e, a)
	}
	return printAccount(c.e.stdout, pos[0], a)
}

func svcacctEdit(c *idCall, pos []string) error {
	var req admin.UpdateServiceAccountRequest
	switch {
	case c.o.enable && c.o.disable:
		return usagef("--enable and --disable: give one")
	case c.o.enable:
		req.NewStatus = admin.AccountStatus(true)
	case c.o.disable:
		req.NewStatus = admin.AccountStatus(false)
	}
	req.NewSecretKey = c.o.secretKey
	if c.o.policy != "" {
		doc, err := readPolicy(c.e, c.o.policy)
		if err != nil {
			return err
		}
		req.NewPolicy = doc
	}
	if req.NewStatus == "" && req.NewSecretKey == "" && req.NewPolicy == nil {
		return usagef("nothing to change: give --secret-key, --policy, --enable or --disable")
	}
	return c.c.UpdateServiceAccount(c.ctx, pos[0], req)
}

func svcacctRm(c *idCall, pos []string) error {
	return c.c.DeleteServiceAccount(c.ctx, pos[0])
}

func policyCreate(c *idCall, pos []string) error {
	doc, err := readPolicy(c.e, pos[1])
	if err != nil {
		return err
	}
	return c.c.AddPolicy(c.ctx, pos[0], doc)
}

func policyRm(c *idCall, pos []string) error {
	return c.c.RemovePolicy(c.ctx, pos[0])
}

func policyLs(c *idCall, pos []string) error {
	policies, err := c.c.ListPolicies(c.ctx)
	if err != nil {
		return err
	}
	if c.o.json {
		return printJSON(c.e, policies)
	}
	ents, err := c.c.PolicyEntities(c.ctx, nil, nil)
	if err != nil {
		return err
	}
	users := map[string][]string{}
	for _, m := range ents.PolicyMappings {
		users[m.Policy] = m.Users
	}
	printPolicies(c.e.stdout, sortedNames(policies), users)
	return nil
}

func policyInfo(c *idCall, pos []string) error {
	p, err := c.c.PolicyInfo(c.ctx, pos[0])
	if err != nil {
		return err
	}
	return printPolicyDoc(c.e.stdout, p.Policy)
}

// policyAssociate attaches (or detaches) the policies named to --user.
func policyAssociate(c *idCall, pos []string, attach bool) error {
	var err error
	if attach {
		_, err = c.c.AttachPolicies(c.ctx, c.o.user, pos...)
	} else {
		_, err = c.c.DetachPolicies(c.ctx, c.o.user, pos...)
	}
	return err
}
