package egress

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"testing"
	"time"
)

// clientHello records the first flight of a TLS client asking for name.
func clientHello(t testing.TB, name string) []byte {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go func() {
		c := tls.Client(a, &tls.Config{ServerName: name, InsecureSkipVerify: name == ""})
		c.SetDeadline(time.Now().Add(5 * time.Second))
		c.Handshake()
	}()
	b.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64<<10)
	n, err := b.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	return buf[:n]
}

func TestClientHelloSNI(t *testing.T) {
	for _, name := range []string{"example.com", ""} {
		hello := clientHello(t, name)
		br := bufio.NewReaderSize(bytes.NewReader(hello), 64<<10)
		got, err := clientHelloSNI(br)
		if err != nil || got != name {
			t.Fatalf("%q: got %q, %v", name, got, err)
		}
		rest, _ := io.ReadAll(br)
		if !bytes.Equal(rest, hello) {
			t.Fatal("the ClientHello was consumed")
		}
	}
	if _, err := clientHelloSNI(bufio.NewReader(bytes.NewReader([]byte("SSH-2.0-x\r\n")))); err == nil {
		t.Fatal("a stream that is not TLS passed")
	}
}

// FuzzClientHelloSNI: whatever the sandbox sends after CONNECT, reading
// the server name consumes nothing, and a name is only found in a stream
// that starts with a TLS handshake record holding all of it; a name is
// one a client could ask for (no control character, no space).
func FuzzClientHelloSNI(f *testing.F) {
	// testdata/fuzz holds recorded ClientHellos (of Go's TLS client, with
	// and without a server name) as seeds
	f.Add([]byte("\x16\x03\x01\x00\x05hello"))
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		br := bufio.NewReaderSize(bytes.NewReader(in), 70<<10)
		name, err := clientHelloSNI(br)
		rest, _ := io.ReadAll(br)
		if !bytes.Equal(rest, in) {
			t.Fatal("input consumed")
		}
		if err != nil {
			return
		}
		if len(in) < 5 || in[0] != 0x16 || len(in) < 5+(int(in[3])<<8|int(in[4])) {
			t.Fatalf("a name (%q) from a stream without a whole handshake record", name)
		}
		for _, c := range []byte(name) {
			if c <= ' ' || c >= 0x7f {
				t.Fatalf("server name %q holds %#x", name, c)
			}
		}
	})
}
