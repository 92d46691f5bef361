package encode

import (
	"bytes"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// jscan reads the JSON rows the Arrow format buffers (JSONLines' rows, as
// this package writes them) value by value, without building maps or
// strings: the Arrow writer appends each value to its column's builder as
// it is read. It reads any JSON; strings with escapes are unescaped into
// a reused buffer.
type jscan struct {
	b   []byte
	i   int
	tmp []byte // the last unescaped string
}

func (s *jscan) reset(b []byte) { s.b, s.i = b, 0 }

// peek skips white space and returns the next byte (0 at the end).
func (s *jscan) peek() byte {
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return c
		}
	}
	return 0
}

func (s *jscan) errorf(format string, args ...any) error {
	return fmt.Errorf("JSON row at byte %d: %s", s.i, fmt.Sprintf(format, args...))
}

func (s *jscan) expect(c byte) error {
	if s.peek() != c {
		return s.errorf("want %q", c)
	}
	s.i++
	return nil
}

// null consumes a null and reports whether it was one.
func (s *jscan) null() bool {
	if s.peek() == 'n' && bytes.HasPrefix(s.b[s.i:], []byte("null")) {
		s.i += 4
		return true
	}
	return false
}

// str reads a string at the cursor: its bytes, unescaped (valid until the
// next call).
func (s *jscan) str() ([]byte, error) {
	if s.peek() != '"' {
		return nil, s.errorf("want a string")
	}
	start := s.i + 1
	escaped := false
	for j := start; j < len(s.b); j++ {
		switch s.b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			s.i = j + 1
			if !escaped {
				return s.b[start:j], nil
			}
			var ok bool
			if s.tmp, ok = unescapeJSON(s.tmp[:0], s.b[start:j]); !ok {
				return nil, s.errorf("bad escape in string")
			}
			return s.tmp, nil
		}
	}
	return nil, s.errorf("unterminated string")
}

// text reads one non-null value as the text Doris reads from it: a string
// unescaped, an array or object as its JSON text, a number or boolean as
// written.
func (s *jscan) text() ([]byte, error) {
	switch s.peek() {
	case '"':
		return s.str()
	case '[', '{':
		start := s.i
		if err := s.skip(); err != nil {
			return nil, err
		}
		return s.b[start:s.i], nil
	}
	start := s.i
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return s.b[start:s.i], nil
		}
		s.i++
	}
	if start == s.i {
		return nil, s.errorf("want a value")
	}
	return s.b[start:s.i], nil
}

// skip passes over one value.
func (s *jscan) skip() error {
	switch s.peek() {
	case '"':
		_, err := s.str()
		return err
	case '[':
		return s.each('[', ']', false, func([]byte) error { return s.skip() })
	case '{':
		return s.each('{', '}', true, func([]byte) error { return s.skip() })
	}
	_, err := s.text()
	return err
}

// each reads an array (keyed false) or object (keyed true), calling fn for
// each element with the cursor on its value (and its key, for objects).
func (s *jscan) each(open, close byte, keyed bool, fn func(key []byte) error) error {
	if err := s.expect(open); err != nil {
		return err
	}
	if s.peek() == close {
		s.i++
		return nil
	}
	for {
		var key []byte
		if keyed {
			k, err := s.str()
			if err != nil {
				return err
			}
			key = k
			if err := s.expect(':'); err != nil {
				return err
			}
		}
		if err := fn(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case close:
			s.i++
			return nil
		default:
			return s.errorf("want ',' or %q", close)
		}
	}
}

// unescapeJSON appends the text of a JSON string's inside b, escapes
// resolved (a surrogate pair as one rune).
func unescapeJSON(dst, b []byte) ([]byte, bool) {
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		if i++; i >= len(b) {
			return dst, false
		}
		switch b[i] {
		case '"', '\\', '/':
			dst = append(dst, b[i])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(b[i+1:])
			if !ok {
				return dst, false
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(b[min(i+3, len(b)):]); ok && i+2 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						r = d
						i += 6
					}
				}
			}
			dst = utf8.AppendRune(dst, r)
		default:
			return dst, false
		}
	}
	return dst, true
}

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
