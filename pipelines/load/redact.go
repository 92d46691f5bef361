package main

import (
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// One redaction path for every flag: a value is echoed in an error only
// when it cannot hold a password, and every line the program prints about a
// failure passes through redact, which blanks whatever part of a flag's
// value may be one, so that a check, dorisio or Doris quoting the value in
// its own words cannot show it either.

// notShown replaces a value, or the part of one, that may be a password.
const notShown = "(not shown: it may hold a password)"

// minSecret is the shortest fragment redact blanks: shorter ones would
// blank ordinary words of the message.
const minSecret = 4

// hidden reports whether d's value must not be echoed: a list, a flag
// marked unshown, or a value shaped like one that carries a password.
func (c *cli) hidden(d *flagDef) bool {
	return d.repeatable || d.unshown || mayHoldSecret(c.fs.Lookup(d.name).Value.String())
}

// mayHoldSecret reports whether v, or an element of the comma-separated
// list it is, may carry a password: user-info or a query ('@', '?', '#'),
// or a ':' that is not the scheme or port of a URL (user:password).
func mayHoldSecret(v string) bool {
	for _, e := range strings.Split(v, ",") {
		if strings.ContainsAny(e, "@?#") {
			return true
		}
		if _, rest, ok := strings.Cut(e, "://"); ok {
			e = portRE.ReplaceAllString(rest, "")
		} else if hostPortRE.MatchString(e) {
			continue
		}
		if strings.Contains(e, ":") {
			return true
		}
	}
	return false
}

var (
	// portRE is a URL's "host:port" before its path.
	portRE = regexp.MustCompile(`^[^/:]*:[0-9]+`)
	// hostPortRE is an address without a scheme whose host is an IP
	// address, a dotted name or localhost (127.0.0.1:8030): "root:1234" or
	// "fe1:8030" may be a user and a password, and are not echoed.
	hostPortRE = regexp.MustCompile(`^(localhost|[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+):[0-9]{1,5}(/[^:]*)?$`)
)

// secrets lists, longest first, what redact blanks: for each flag whose
// value may hold a password, the value, its elements, and the parts of them
// a password would be (after ':', before '@', a URL's password, a query,
// its values, a fragment).
func (c *cli) secrets() []string {
	seen := map[string]bool{}
	add := func(s string) {
		if len(strings.TrimSpace(s)) >= minSecret {
			seen[s] = true
		}
	}
	for _, d := range c.ours {
		v := c.fs.Lookup(d.name).Value.String()
		if v == "" || !(d.unshown || mayHoldSecret(v) || secretHeader(d)) {
			continue
		}
		add(v)
		for _, e := range strings.Split(v, ",") {
			add(e)
			for _, sep := range []string{":", "?", "#", "="} {
				if _, after, ok := strings.Cut(e, sep); ok && !strings.HasPrefix(after, "//") {
					add(after)
				}
			}
			if before, _, ok := strings.Cut(e, "@"); ok {
				add(before)
			}
			if u, err := url.Parse(e); err == nil {
				if pw, ok := u.User.Password(); ok {
					add(pw)
				}
				add(u.User.String())
				add(u.RawQuery)
				add(u.Fragment)
				for _, vs := range u.Query() {
					for _, q := range vs {
						add(q)
					}
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// secretHeader reports whether d is --header with a header whose name
// says it carries a credential (Authorization, a token, a password).
func secretHeader(d *flagDef) bool {
	h, ok := d.value.(headerFlags)
	if !ok {
		return false
	}
	for k := range h {
		k = strings.ToLower(k)
		if strings.Contains(k, "auth") || strings.Contains(k, "pass") || strings.Contains(k, "token") || strings.Contains(k, "secret") {
			return true
		}
	}
	return false
}

// redact blanks in text every part of a flag value that may be a password.
func (c *cli) redact(text string) string {
	for _, s := range c.secrets() {
		text = strings.ReplaceAll(text, s, notShown)
	}
	return text
}
