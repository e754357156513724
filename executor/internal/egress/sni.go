package egress

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"time"
)

// clientHelloSNI reads, without consuming it, the TLS ClientHello at the
// start of br and returns the server name it asks for ("" when it names
// none). It fails when the stream does not start with a ClientHello that
// fits in one TLS record.
func clientHelloSNI(br *bufio.Reader) (string, error) {
	const headerLen = 5
	hdr, err := br.Peek(headerLen)
	if err != nil {
		return "", err
	}
	if hdr[0] != 0x16 { // handshake record
		return "", errors.New("the tunnel does not start with a TLS ClientHello")
	}
	n := int(hdr[3])<<8 | int(hdr[4])
	rec, err := br.Peek(headerLen + n)
	if err != nil {
		return "", err
	}
	var sni string
	seen := false
	// The handshake stops at GetConfigForClient's error: nothing is ever
	// written to the client.
	err = tls.Server(helloConn{r: bytes.NewReader(rec)}, &tls.Config{
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			sni, seen = h.ServerName, true
			return nil, errSeen
		},
	}).Handshake()
	if !seen {
		return "", errors.New("malformed TLS ClientHello: " + err.Error())
	}
	return sni, nil
}

var errSeen = errors.New("client hello seen")

// helloConn is a net.Conn that reads a recorded ClientHello and refuses
// every write.
type helloConn struct{ r io.Reader }

func (c helloConn) Read(p []byte) (int, error)     { return c.r.Read(p) }
func (helloConn) Write([]byte) (int, error)        { return 0, io.ErrClosedPipe }
func (helloConn) Close() error                     { return nil }
func (helloConn) LocalAddr() net.Addr              { return nil }
func (helloConn) RemoteAddr() net.Addr             { return nil }
func (helloConn) SetDeadline(time.Time) error      { return nil }
func (helloConn) SetReadDeadline(time.Time) error  { return nil }
func (helloConn) SetWriteDeadline(time.Time) error { return nil }
