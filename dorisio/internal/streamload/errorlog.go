package streamload

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxErrorLogBytes bounds what is read of an error log: 51 rows (§7), each
// as long as a row may be.
const maxErrorLogBytes = 16 << 20

// LogEntry is one row of a load's error log (docs/protocol.md §7):
// "Reason: <reason>. src line [<row>]; ". Doris shows the row as the stage
// that refused it saw it: the reader the line as read, the conversion the
// row's source values joined by a space, the table sink nothing (its
// reason names the column and the value's first 32 bytes).
type LogEntry struct {
	Reason string // Doris' reason, without the password
	// Src is what Doris showed of the row; Alt holds other readings of the
	// entry where ". src line [" also occurs inside the reason or the row
	// (the entry is data: nothing escapes it), the first reading first.
	Src string
	Alt []string
}

// fetchErrorLog reads a load's error log (§7), best effort: short timeout,
// no credentials (the URL may be a presigned S3 link). lines are its first
// lines for an error message; entries are its rows, read whole.
func (c *Client) fetchErrorLog(ctx context.Context, errorURL string) (lines []string, entries []LogEntry) {
	u, err := url.Parse(errorURL)
	if errorURL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, nil
	}
	resp, err := c.hc.Do(hr)
	if err != nil {
		// Neither the query (it may be a presigned link) nor url.Error's copy of it.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		c.cfg.Logger.Debug("streamload: error log unreachable", "url", redactURL(&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}), "err", err)
		return nil, nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorLogBytes+1))
	if err != nil {
		return nil, nil
	}
	text := string(body)
	cut := len(body) > maxErrorLogBytes
	if cut {
		text = text[:maxErrorLogBytes]
	}
	for _, l := range strings.Split(text, "\n") {
		if len(lines) == maxErrorLog {
			break
		}
		if s := strings.TrimSpace(l); s != "" {
			if len(s) > 500 {
				s = s[:500] + "..."
			}
			lines = append(lines, c.redact(s))
		}
	}
	return lines, c.logEntries(text, cut)
}

// logEntries reads the rows of an error log's text; cut says the text
// stops short of the log's end (its last entry is dropped).
func (c *Client) logEntries(text string, cut bool) []LogEntry {
	const mark, src = "Reason: ", ". src line ["
	var out []LogEntry
	for len(text) > 0 {
		if !strings.HasPrefix(text, mark) {
			i := strings.Index(text, "\n"+mark)
			if i < 0 {
				break
			}
			text = text[i+1:]
			continue
		}
		// An entry runs to the next line that starts one (or a summary): a
		// row shown as read may hold line delimiters (a quoted value).
		body := text[len(mark):]
		text = ""
		if i := nextLine(body, mark, "Summary: "); i >= 0 {
			body, text = body[:i], body[i+1:]
		} else if cut {
			break
		}
		body = strings.TrimRight(body, "\r\n")
		body, ok := strings.CutSuffix(body, "]; ")
		if !ok {
			if body, ok = strings.CutSuffix(body, "];"); !ok {
				continue
			}
		}
		var e LogEntry
		for at := 0; ; {
			i := strings.Index(body[at:], src)
			if i < 0 {
				break
			}
			if e.Reason == "" {
				e.Reason, e.Src = c.redact(body[:at+i]), body[at+i+len(src):]
			} else {
				e.Alt = append(e.Alt, body[at+i+len(src):])
			}
			at += i + 1
		}
		if e.Reason != "" {
			out = append(out, e)
		}
	}
	return out
}

// nextLine is the index of the first "\n" in s followed by one of starts,
// or -1.
func nextLine(s string, starts ...string) int {
	for at := 0; ; {
		i := strings.IndexByte(s[at:], '\n')
		if i < 0 {
			return -1
		}
		at += i
		for _, st := range starts {
			if strings.HasPrefix(s[at+1:], st) {
				return at
			}
		}
		at++
	}
}

// firstErrorEntry reads an answer's FirstErrorMsg (master, §4, §7),
// "<reason>. Src line: <row>", as the one entry known when the log cannot
// be read.
func (c *Client) firstErrorEntry(msg string) []LogEntry {
	reason, src, ok := strings.Cut(msg, ". Src line: ")
	if !ok {
		return nil
	}
	return []LogEntry{{Reason: c.redact(reason), Src: src}}
}
