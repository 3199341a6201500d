package iam

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestPermissions(t *testing.T) {
	tests := []struct {
		op        string
		versionID bool
		want      []Permission
	}{
		{"GetObject", false, []Permission{{"s3:GetObject", TargetObject}}},
		{"GetObject", true, []Permission{{"s3:GetObjectVersion", TargetObject}}},
		{"HeadObject", false, []Permission{{"s3:GetObject", TargetObject}}},
		{"ListObjectsV2", false, []Permission{{"s3:ListBucket", TargetBucket}}},
		{"ListObjectVersions", false, []Permission{{"s3:ListBucketVersions", TargetBucket}}},
		{"DeleteObject", true, []Permission{{"s3:DeleteObjectVersion", TargetObject}}},
		{"UploadPart", true, []Permission{{"s3:PutObject", TargetObject}}},
		{"ListParts", false, []Permission{{"s3:ListMultipartUploadParts", TargetObject}}},
		{"ListMultipartUploads", false, []Permission{{"s3:ListBucketMultipartUploads", TargetBucket}}},
		{"CopyObject", false, []Permission{{"s3:PutObject", TargetObject}, {"s3:GetObject", TargetSource}}},
		{"CopyObject", true, []Permission{{"s3:PutObject", TargetObject}, {"s3:GetObjectVersion", TargetSource}}},
		{"GetObjectAttributes", true, []Permission{{"s3:GetObjectVersion", TargetObject}, {"s3:GetObjectVersionAttributes", TargetObject}}},
		{"ListBuckets", false, []Permission{{"s3:ListAllMyBuckets", TargetAll}}},
		{"HeadBucket", false, []Permission{{"s3:ListBucket", TargetBucket}}},
		{"DeleteBucketTagging", false, []Permission{{"s3:PutBucketTagging", TargetBucket}}},
	}
	for _, tt := range tests {
		got, ok := Permissions(tt.op, tt.versionID)
		if !ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Permissions(%s, %v) = %v, %v; want %v", tt.op, tt.versionID, got, ok, tt.want)
		}
	}
	if _, ok := Permissions("Unsupported", false); ok {
		t.Error("Permissions(Unsupported) is known")
	}
}

// TestPermissionsCoverRoutes reads the route tables of s3api (S3 in
// ../router.go, admin in ../system.go and ../identities.go) and checks that every operation it routes
// has an entry, so a new route cannot ship without one. The file is
// parsed rather than imported: s3api will import this package.
func TestPermissionsCoverRoutes(t *testing.T) {
	var names []string
	for file, funcs := range map[string][]string{
		"../router.go":     {"routes", "plainRoutes"},
		"../system.go":     {"adminRoutes"},
		"../identities.go": {"identityRoutes"},
	} {
		names = append(names, routeNames(t, file, funcs)...)
	}
	if len(names) < 60 {
		t.Fatalf("found only %d routes in ../router.go, ../system.go and ../identities.go: has their shape changed?", len(names))
	}
	for _, name := range names {
		if _, ok := Permissions(name, false); !ok {
			t.Errorf("route %s has no entry in the action table", name)
		}
	}
}

// routeNames are the name fields of the route literals in funcs of file.
func routeNames(t *testing.T, file string, funcs []string) []string {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || !slices.Contains(funcs, fn.Name.Name) {
			continue
		}
		ast.Inspect(fn, func(n ast.Node) bool {
			kv, ok := n.(*ast.KeyValueExpr)
			if !ok {
				return true
			}
			if key, ok := kv.Key.(*ast.Ident); ok && key.Name == "name" {
				if lit, ok := kv.Value.(*ast.BasicLit); ok {
					name, _ := strconv.Unquote(lit.Value)
					names = append(names, name)
				}
			}
			return true
		})
	}
	return names
}

// TestDocumentedActions: every action of actionTable is named in the
// users' reference, docs/s3-compatibility.md, so the table users read
// cannot lose an action the server checks.
func TestDocumentedActions(t *testing.T) {
	doc, err := os.ReadFile("../../docs/s3-compatibility.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range actionTable {
		for _, a := range []string{r.action, r.versioned} {
			if a != "" && !strings.Contains(string(doc), "`"+a+"`") {
				t.Errorf("docs/s3-compatibility.md does not name %s (%s)", a, r.operation)
			}
		}
	}
}
