package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// The hook's and the dry run's exchange with the daemon is one HTTP/1.1
// request and one answer on a fresh connection. The client writes and
// reads them itself (writeRequest, readResponse) instead of going
// through net/http's client: a hook process does this once, cold, and
// the general machinery's first use cost more than the rest of the
// exchange. The daemon's side is net/http's server, as for every other
// request; writeAnswer gives its answer the Content-Length readResponse
// requires.

// writeRequest writes a POST of body to path with the bearer token and
// the headers h, asking the daemon to close the connection after its
// answer. A path, header name or value that HTTP/1.1 would not carry as
// it is (a control character could end a header early) is an error.
func writeRequest(w io.Writer, path, token string, h http.Header, body []byte) error {
	if path == "" || path[0] != '/' || strings.IndexFunc(path, func(r rune) bool { return r <= ' ' || r >= 0x7f }) >= 0 {
		return fmt.Errorf("request path %q", path)
	}
	b := make([]byte, 0, 512+len(body))
	b = append(b, "POST "+path+" HTTP/1.1\r\nHost: claw\r\nConnection: close\r\nContent-Type: application/json\r\n"...)
	add := func(k, v string) error {
		if !headerName(k) || !headerValue(v) {
			return fmt.Errorf("header %q cannot be sent as it is", k)
		}
		b = append(b, k+": "+v+"\r\n"...)
		return nil
	}
	if err := add("Authorization", "Bearer "+token); err != nil {
		return err
	}
	for k, vs := range h {
		for _, v := range vs {
			if err := add(k, v); err != nil {
				return err
			}
		}
	}
	b = append(b, "Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"...)
	b = append(b, body...)
	_, err := w.Write(b)
	return err
}

func headerName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

func headerValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// maxAnswerHeaders bounds the header lines of an answer.
const maxAnswerHeaders = 32

// readResponse reads the daemon's answer from r: the status ("409
// Conflict") and its code and, for a 200, the body of Content-Length
// bytes, at most max. It takes only the form claw serve writes: an
// HTTP/1.1 status line, header lines of at most r's buffer, a
// Content-Length and no Transfer-Encoding; anything else is an error.
func readResponse(r *bufio.Reader, max int64) (status string, code int, body []byte, err error) {
	line, err := readLine(r)
	if err != nil {
		return "", 0, nil, err
	}
	status, ok := strings.CutPrefix(line, "HTTP/1.1 ")
	if !ok || len(status) < 3 || (len(status) > 3 && status[3] != ' ') {
		return "", 0, nil, fmt.Errorf("malformed status line %q", clipText(line))
	}
	for i := range 3 {
		if status[i] < '0' || status[i] > '9' {
			return "", 0, nil, fmt.Errorf("malformed status line %q", clipText(line))
		}
		code = code*10 + int(status[i]-'0')
	}
	length := int64(-1)
	for n := 0; ; n++ {
		if line, err = readLine(r); err != nil {
			return "", 0, nil, err
		}
		if line == "" {
			break
		}
		if n == maxAnswerHeaders {
			return "", 0, nil, errors.New("too many header lines")
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || !headerName(name) || !headerValue(value) {
			return "", 0, nil, fmt.Errorf("malformed header line %q", clipText(line))
		}
		value = strings.Trim(value, " \t")
		switch {
		case strings.EqualFold(name, "Transfer-Encoding"):
			return "", 0, nil, errors.New("a Transfer-Encoding the client does not take")
		case strings.EqualFold(name, "Content-Length"):
			v, err := strconv.ParseInt(value, 10, 64)
			if length >= 0 || err != nil || v < 0 || value[0] == '+' {
				return "", 0, nil, fmt.Errorf("bad or repeated Content-Length %q", clipText(value))
			}
			length = v
		}
	}
	if code != http.StatusOK {
		return status, code, nil, nil
	}
	switch {
	case length < 0:
		return "", 0, nil, errors.New("an answer without a Content-Length")
	case length > max:
		return "", 0, nil, errors.New("the daemon's answer is too large")
	}
	body = make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return "", 0, nil, fmt.Errorf("reading the daemon's answer: %w", err)
	}
	return status, code, body, nil
}

// readLine reads one CRLF-terminated line, without the CRLF.
func readLine(r *bufio.Reader) (string, error) {
	b, err := r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return "", errors.New("a line of the answer is too long")
	}
	if err != nil {
		return "", fmt.Errorf("reading the daemon's answer: %w", err)
	}
	if len(b) < 2 || b[len(b)-2] != '\r' {
		return "", fmt.Errorf("a line of the answer does not end in CRLF: %q", clipText(string(b)))
	}
	return string(b[:len(b)-2]), nil
}

func clipText(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// writeAnswer writes a as a 200 with its Content-Length, which the
// client's readResponse requires (net/http's server would send a longer
// answer in chunks).
func writeAnswer(w http.ResponseWriter, a HookAnswer) {
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(a); err != nil {
		writeError(w, http.StatusInternalServerError, "answer", "the daemon could not encode its answer")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(http.StatusOK)
	w.Write(b.Bytes())
}
