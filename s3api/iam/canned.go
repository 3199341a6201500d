package iam

// Names of the canned policies, which exist from the start and cannot
// be changed. They are MinIO's built-in policies, so that users and
// tools written for MinIO find them under the same names.
const (
	ReadWrite    = "readwrite"    // every S3 action on every bucket and object
	ReadOnly     = "readonly"     // read objects by name (no listing) and find buckets' regions
	WriteOnly    = "writeonly"    // upload objects, nothing else
	Diagnostics  = "diagnostics"  // the admin actions that observe the server without changing it
	ConsoleAdmin = "consoleAdmin" // everything: S3, admin and KMS actions
)

// cannedDocs are the canned policies as documents, so that what a user
// reads back (mc admin policy info) is what is evaluated. Admin and KMS
// statements name "*": their requests have no S3 resource.
var cannedDocs = map[string]string{
	ReadWrite: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow",
		"Action":["s3:*"],"Resource":["arn:aws:s3:::*"]}]}`,
	ReadOnly: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow",
		"Action":["s3:GetBucketLocation","s3:GetObject"],"Resource":["arn:aws:s3:::*"]}]}`,
	WriteOnly: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow",
		"Action":["s3:PutObject"],"Resource":["arn:aws:s3:::*"]}]}`,
	Diagnostics: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow",
		"Action":["admin:ServerInfo","admin:Profiling","admin:ServerTrace","admin:ConsoleLog",
		"admin:OBDInfo","admin:TopLocksInfo","admin:BandwidthMonitor","admin:Prometheus"],
		"Resource":["*"]}]}`,
	ConsoleAdmin: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow",
		"Action":["admin:*","kms:*","s3:*"],"Resource":["*"]}]}`,
}

// Canned returns a new copy of the canned policy called name, with its
// Name set. Callers that evaluate it often keep the copy.
func Canned(name string) (*Policy, bool) {
	doc, ok := cannedDocs[name]
	if !ok {
		return nil, false
	}
	p, err := Parse([]byte(doc), Identity, MaxIdentityPolicySize)
	if err != nil {
		panic("iam: canned policy " + name + ": " + err.Error()) // a test parses them all
	}
	p.Name = name
	return p, true
}

// CannedNames lists the canned policies, sorted.
func CannedNames() []string {
	return sortedKeys(cannedDocs)
}
