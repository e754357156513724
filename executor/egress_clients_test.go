//go:build linux

package executor

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// clientFixture is a TLS server for example.com (httptest's certificate
// name) on 127.0.0.1, its CA in a file the sandbox can read, and a
// workspace the sandbox can write.
type clientFixture struct {
	port, dir, ca, ws string
}

func newClientFixture(t *testing.T, h http.Handler) *clientFixture {
	t.Helper()
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	f := &clientFixture{port: serverPort(t, srv), dir: dir, ca: filepath.Join(dir, "ca.pem"), ws: filepath.Join(dir, "ws")}
	must(t, os.WriteFile(f.ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644))
	must(t, os.Mkdir(f.ws, 0o777))
	withEgressNames(t, testNames{"example.com": "127.0.0.1"})
	return f
}

// run runs script in the workspace with the egress grant for the
// server, and checks that every connection was admitted.
func (f *clientFixture) run(t *testing.T, script string, read ...string) Result {
	t.Helper()
	s := egressSpec(script, "example.com:"+f.port)
	s.Read = append([]string{f.dir}, read...)
	s.Write = []string{f.ws}
	s.Timeout = 60 * 1e9
	res := run(t, s)
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s\negress: %+v", res.ExitCode, res.Stdout, res.Stderr, res.Egress)
	}
	if res.Egress == nil || len(res.Egress.Conns) == 0 {
		t.Fatalf("no connection through the proxy: %+v", res.Egress)
	}
	for _, c := range res.Egress.Conns {
		if !c.Admitted || c.Host != "example.com" || c.Method != "CONNECT" || c.Down == 0 {
			t.Fatalf("connection %+v", c)
		}
	}
	return res
}

func TestEgressGitClone(t *testing.T) {
	requireSandbox(t)
	git := needTool(t, "git")
	backend := "/usr/lib/git-core/git-http-backend"
	if _, err := os.Stat(backend); err != nil {
		t.Skip("no git http-backend")
	}
	repos := t.TempDir()
	src := filepath.Join(repos, "src")
	for _, argv := range [][]string{
		{git, "init", "-q", "-b", "main", src},
		{git, "-C", src, "-c", "user.email=t@e", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "first"},
		{git, "clone", "-q", "--bare", src, filepath.Join(repos, "r.git")},
	} {
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v %s", argv, err, out)
		}
	}
	f := newClientFixture(t, &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + repos, "GIT_HTTP_EXPORT_ALL=1"}})
	res := f.run(t, "GIT_SSL_CAINFO="+f.ca+" git clone -q https://example.com:"+f.port+"/r.git out && git -C out log --format=%s")
	if string(res.Stdout) != "first\n" {
		t.Fatalf("stdout %q", res.Stdout)
	}
}

func TestEgressGoModDownload(t *testing.T) {
	requireSandbox(t)
	goBin := needTool(t, "go")
	goroot, err := exec.Command(goBin, "env", "GOROOT").Output()
	if err != nil {
		t.Skip(err)
	}
	mod := "module example.com/m\n\ngo 1.21\n"
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	for name, body := range map[string]string{"go.mod": mod, "m.go": "package m\n"} {
		w, _ := zw.Create("example.com/m@v1.0.0/" + name)
		io.WriteString(w, body)
	}
	must(t, zw.Close())
	files := map[string]string{
		"/example.com/m/@v/list":        "v1.0.0\n",
		"/example.com/m/@v/v1.0.0.info": `{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}`,
		"/example.com/m/@v/v1.0.0.mod":  mod,
		"/example.com/m/@v/v1.0.0.zip":  zbuf.String(),
	}
	f := newClientFixture(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, body)
	}))
	res := f.run(t, fmt.Sprintf("export SSL_CERT_FILE=%s GOPROXY=https://example.com:%s GOSUMDB=off GOTOOLCHAIN=local GOFLAGS=-mod=mod GOMODCACHE=%s/mod GOCACHE=%s/cache GOPATH=%s/gopath; %s mod download -json example.com/m@v1.0.0 | grep -c '\"Zip\"'",
		f.ca, f.port, f.ws, f.ws, f.ws, goBin), strings.TrimSpace(string(goroot)))
	if string(res.Stdout) != "1\n" {
		t.Fatalf("stdout %q", res.Stdout)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "mod/example.com/m@v1.0.0/m.go")); err != nil {
		t.Fatal(err)
	}
}

func TestEgressPipDownload(t *testing.T) {
	requireSandbox(t)
	pip := needTool(t, "pip")
	if strings.Contains(pip, "/.pyenv/") {
		// a pyenv shim: the interpreter lives under its root
		root, err := exec.Command("pyenv", "root").Output()
		if err != nil {
			t.Skip("pip is a pyenv shim and pyenv root is unknown")
		}
		pip = strings.TrimSpace(string(root))
	} else {
		pip = filepath.Dir(pip)
	}
	var wbuf bytes.Buffer
	zw := zip.NewWriter(&wbuf)
	for name, body := range map[string]string{
		"tiny/__init__.py":            "",
		"tiny-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tiny\nVersion: 1.0\n",
		"tiny-1.0.dist-info/WHEEL":    "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
		"tiny-1.0.dist-info/RECORD":   "",
	} {
		w, _ := zw.Create(name)
		io.WriteString(w, body)
	}
	must(t, zw.Close())
	wheel := wbuf.Bytes()
	sum := sha256.Sum256(wheel)
	const file = "tiny-1.0-py3-none-any.whl"
	f := newClientFixture(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/simple/tiny/":
			fmt.Fprintf(w, `<html><body><a href="/files/%s#sha256=%s">%s</a></body></html>`, file, hex.EncodeToString(sum[:]), file)
		case "/files/" + file:
			w.Write(wheel)
		default:
			http.NotFound(w, r)
		}
	}))
	f.run(t, fmt.Sprintf("export HOME=%s PIP_CERT=%s PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1; pip download -q --no-deps --index-url https://example.com:%s/simple/ -d %s/dl tiny==1.0",
		f.ws, f.ca, f.port, f.ws), pip)
	if _, err := os.Stat(filepath.Join(f.ws, "dl", file)); err != nil {
		t.Fatal(err)
	}
}

func TestEgressNpmCi(t *testing.T) {
	requireSandbox(t)
	needTool(t, "npm")
	var tgz bytes.Buffer
	gz := gzip.NewWriter(&tgz)
	tw := tar.NewWriter(gz)
	pkg := `{"name":"tiny","version":"1.0.0"}`
	tw.WriteHeader(&tar.Header{Name: "package/package.json", Mode: 0o644, Size: int64(len(pkg))})
	io.WriteString(tw, pkg)
	must(t, tw.Close())
	must(t, gz.Close())
	sum := sha512.Sum512(tgz.Bytes())
	integrity := "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
	f := newClientFixture(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/tiny/-/tiny-1.0.0.tgz" {
			http.NotFound(w, r)
			return
		}
		w.Write(tgz.Bytes())
	}))
	tarball := "https://example.com:" + f.port + "/tiny/-/tiny-1.0.0.tgz"
	must(t, os.WriteFile(filepath.Join(f.ws, "package.json"), []byte(`{"name":"app","version":"1.0.0","dependencies":{"tiny":"1.0.0"}}`), 0o644))
	must(t, os.WriteFile(filepath.Join(f.ws, "package-lock.json"), []byte(`{"name":"app","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{
"":{"name":"app","version":"1.0.0","dependencies":{"tiny":"1.0.0"}},
"node_modules/tiny":{"version":"1.0.0","resolved":"`+tarball+`","integrity":"`+integrity+`"}}}`), 0o644))
	f.run(t, fmt.Sprintf("export HOME=%s npm_config_cafile=%s npm_config_registry=https://example.com:%s/ npm_config_cache=%s/.npm; timeout 15 npm ci --no-audit --no-fund --ignore-scripts --loglevel=error --fetch-retries=0",
		f.ws, f.ca, f.port, f.ws))
	if b, err := os.ReadFile(filepath.Join(f.ws, "node_modules/tiny/package.json")); err != nil || string(b) != pkg {
		t.Fatalf("installed package.json %q, %v", b, err)
	}
}
