package config

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRegion: the region is unset by default (us-east-1, any
// LocationConstraint) and comes from each layer like any setting.
func TestRegion(t *testing.T) {
	file := filepath.Join(t.TempDir(), "xfs3.json")
	os.WriteFile(file, []byte(`{"region": "eu-west-1"}`), 0o644)
	for _, c := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"default", nil, nil, ""},
		{"file", []string{"--config", file}, nil, "eu-west-1"},
		{"environment", []string{"--config", file}, map[string]string{"XFS3_REGION": "us-west-2"}, "us-west-2"},
		{"empty variable", []string{"--config", file}, map[string]string{"XFS3_REGION": ""}, ""},
		{"flag", []string{"--config", file, "--region", "default"}, map[string]string{"XFS3_REGION": "us-west-2"}, "default"},
	} {
		cfg, err := Load(c.args, env(c.env), io.Discard)
		if err != nil || cfg.Region != c.want {
			t.Errorf("%s: region %q, %v; want %q", c.name, cfg.Region, err, c.want)
		}
	}
}

func TestValidRegion(t *testing.T) {
	for name, ok := range map[string]bool{
		"us-east-1": true, "EU": true, "default": true, "zone_group-2": true, strings.Repeat("a", MaxRegion): true,
		"": false, "eu/west": false, "eu west": false, "é": false, "a.b": false, strings.Repeat("a", MaxRegion+1): false,
	} {
		if ValidRegion(name) != ok {
			t.Errorf("ValidRegion(%q) = %v", name, !ok)
		}
	}
}
