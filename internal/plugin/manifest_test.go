package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"path"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

const echoManifest = `name = "echo-plugin"
version = "0.1.0"
capabilities = ["tool"]

[[tools]]
name = "echo"
description = "Echoes input"
command = "./echo-plugin"
schema = { type = "object" }
`

func TestDecodeManifest(t *testing.T) {
	m, err := DecodeManifest([]byte(echoManifest))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "echo-plugin" || len(m.Tools) != 1 || m.Tools[0].Command != "./echo-plugin" || string(m.Tools[0].SchemaJSON()) != `{"type":"object"}` {
		t.Fatalf("decoded %+v", m)
	}
	if m, err := DecodeManifest([]byte(echoManifest + "[reach]\nhosts = [\"localhost:8080\", \"[::1]:443\"]\n")); err != nil || len(m.Reach.Hosts) != 2 {
		t.Fatalf("hosts: %+v %v", m, err)
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"unknown key", "colour = 1\n" + echoManifest, `manifest.toml:1:1: unknown key "colour"`},
		{"unknown tool key", strings.Replace(echoManifest, "schema =", "shell = 1\nschema =", 1), `manifest.toml:9:1: unknown key "tools.shell"`},
		{"wrong type", strings.Replace(echoManifest, `version = "0.1.0"`, "version = 1", 1), "manifest.toml:2:"},
		{"syntax", "name = \n", "manifest.toml:1:"},
		{"host without port", echoManifest + "[reach]\nhosts = [\"example.com\"]\n", "want host:port"},
		{"host port 0", echoManifest + "[reach]\nhosts = [\"example.com:0\"]\n", "port of 1 to 65535"},
		{"host url", echoManifest + "[reach]\nhosts = [\"http://example.com:80\"]\n", "want host:port"},
		{"command above", strings.Replace(echoManifest, "./echo-plugin", "../x", 1), "inside the plugin directory"},
		{"absolute command", strings.Replace(echoManifest, "./echo-plugin", "/bin/sh", 1), "inside the plugin directory"},
		{"bad name", strings.Replace(echoManifest, `"echo-plugin"`, `"../x"`, 1), "name"},
		{"no schema", strings.Replace(echoManifest, "schema = { type = \"object\" }\n", "", 1), "schema: missing"},
		{"glob reach", echoManifest + "[reach]\nread = [\"*\"]\n", "glob"},
		{"capability", strings.Replace(echoManifest, `["tool"]`, `["root"]`, 1), "capabilities"},
		{"remote ref", strings.Replace(echoManifest, `{ type = "object" }`, `{ type = "object", properties = { a = { "$ref" = "https://example.com/s.json" } } }`, 1), "usable JSON Schema"},
		{"timeout", strings.Replace(echoManifest, "schema =", "timeout = \"1h\"\nschema =", 1), "timeout"},
	} {
		_, err := DecodeManifest([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// FuzzDecodeManifest: a refusal is a *ManifestError whose position lies
// in the document; an accepted manifest satisfies every rule validate
// states (names, unique tools, commands inside the directory, hosts as host:port,
// object schemas) and survives a TOML round trip unchanged.
func FuzzDecodeManifest(f *testing.F) {
	f.Add([]byte(echoManifest))
	f.Add([]byte(echoManifest + "[reach]\nread = [\"a\", \"~/b\"]\nwrite = [\"/c\"]\n"))
	f.Add([]byte(echoManifest + "[reach]\nhosts = [\"api.example.com:443\", \"[::1]:8080\"]\n"))
	f.Add([]byte(echoManifest + "[[tools]]\nname = \"echo\"\ncommand = \"x\"\nschema = {type=\"object\"}\n"))
	f.Add([]byte("name = \"a\"\nversion = \"1\"\ncapabilities = [\"tool\"]\n[[tools]]\nname=\"t\"\ncommand=\"bin/../t\"\nschema={type=\"object\",properties={a={type=\"string\"}}}\ntimeout=\"5s\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeManifest(data)
		if err != nil {
			var me *ManifestError
			if !errors.As(err, &me) {
				t.Fatalf("error %v is not a *ManifestError", err)
			}
			if me.Line > bytes.Count(data, []byte("\n"))+1 || me.Line < 0 {
				t.Fatalf("line %d outside a %d-line document", me.Line, bytes.Count(data, []byte("\n"))+1)
			}
			return
		}
		if !nameRe().MatchString(m.Name) || len(m.Tools) == 0 {
			t.Fatalf("accepted %+v", m)
		}
		for _, h := range m.Reach.Hosts {
			if _, p, err := net.SplitHostPort(h); err != nil || p == "0" || p == "" {
				t.Fatalf("accepted host %q", h)
			}
		}
		seen := map[string]bool{}
		for _, tl := range m.Tools {
			p := path.Clean(tl.Command)
			if seen[tl.Name] || path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") || tl.Schema["type"] != "object" {
				t.Fatalf("accepted tool %+v", tl)
			}
			if _, err := tl.resolved(); err != nil {
				t.Fatalf("accepted tool %+v", tl)
			}
			seen[tl.Name] = true
		}
		again, err := toml.Marshal(m)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		m2, err := DecodeManifest(again)
		if err != nil {
			t.Fatalf("round trip refused: %v\n%s", err, again)
		}
		j1, _ := json.Marshal(m)
		j2, _ := json.Marshal(m2)
		if !bytes.Equal(j1, j2) {
			t.Fatalf("round trip changed the manifest:\n%+v\n%+v", m, m2)
		}
	})
}
