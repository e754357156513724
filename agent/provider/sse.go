package provider

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Limits of the SSE reader. A line or an event past its cap ends the
// stream with ErrTooLarge; nothing is buffered without bound.
const (
	defaultSSELineCap  = 256 << 10 // one line
	defaultSSEEventCap = 1 << 20   // the data of one event
)

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	Type string // the event: field; "" when absent ("message" in the spec)
	Data string // data: lines joined with "\n"
}

// sseReader parses text/event-stream (WHATWG HTML, "Server-sent events")
// line by line from a bufio.Reader: event and data fields, comment lines
// starting with ':', blank-line dispatch, LF or CRLF line ends. id and
// retry fields are ignored: a model stream is never resumed.
type sseReader struct {
	r        *bufio.Reader
	lineCap  int
	eventCap int
	line     []byte
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 16<<10), lineCap: defaultSSELineCap, eventCap: defaultSSEEventCap}
}

// readLine returns the next line without its line end. At the end of the
// input it returns the last unterminated line, then io.EOF.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		chunk, err := s.r.ReadSlice('\n')
		if len(s.line)+len(chunk) > s.lineCap+2 {
			return nil, fmt.Errorf("%w: %w: stream line longer than %d bytes", ErrBadResponse, ErrTooLarge, s.lineCap)
		}
		s.line = append(s.line, chunk...)
		switch {
		case err == nil:
			return trimEOL(s.line), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(s.line) == 0 {
				return nil, io.EOF
			}
			return trimEOL(s.line), nil
		default:
			return nil, err
		}
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// Next returns the next event with data. It returns io.EOF at the end of
// the stream; an event cut off by the end of the stream is still returned,
// since some servers omit the final blank line.
func (s *sseReader) Next() (sseEvent, error) {
	var (
		typ     string
		data    []byte
		hasData bool
	)
	for {
		line, err := s.readLine()
		if errors.Is(err, io.EOF) {
			if hasData {
				return sseEvent{Type: typ, Data: string(data)}, nil
			}
			return sseEvent{}, io.EOF
		}
		if err != nil {
			return sseEvent{}, err
		}
		if len(line) == 0 {
			if hasData {
				return sseEvent{Type: typ, Data: string(data)}, nil
			}
			typ = ""
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(field) {
		case "event":
			typ = string(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
			if len(data) > s.eventCap {
				return sseEvent{}, fmt.Errorf("%w: %w: stream event larger than %d bytes", ErrBadResponse, ErrTooLarge, s.eventCap)
			}
		}
	}
}
