package mcp

import (
	"fmt"
	"strings"
)

// expandVars replaces ${NAME} and ${NAME:-default} in s, as Claude Code
// does in .mcp.json: a config shared in a repository names secrets without
// holding them. A variable that is unset (and has no default) is an error,
// so a server never starts with half its configuration. "$" not followed
// by "{" is kept as written.
func expandVars(s string, env func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("unterminated ${ in %q", clean(s[i:], ""))
		}
		expr := s[i+2 : i+end]
		name, def, hasDef := strings.Cut(expr, ":-")
		if !envNamePattern().MatchString(name) {
			return "", fmt.Errorf("${%s}: not a variable name", clean(expr, ""))
		}
		v, ok := env(name)
		switch {
		case ok && v != "":
			b.WriteString(v)
		case hasDef:
			b.WriteString(def)
		case ok:
		default:
			return "", fmt.Errorf("environment variable %s is not set", name)
		}
		s = s[i+end+1:]
	}
}

// expandServer expands the members that may name variables.
func expandServer(f *serverFile, env func(string) (string, bool)) (secretVars []string, err error) {
	// The variables named where a credential goes (headers, oauth) are
	// secrets: the run keeps them from the commands' environment.
	secretEnv := func(name string) (string, bool) {
		secretVars = append(secretVars, name)
		return env(name)
	}
	one := func(member string, p *string) error {
		if p == nil {
			return nil
		}
		lookup := env
		if member == "headers" || strings.HasPrefix(member, "oauth.") {
			lookup = secretEnv
		}
		v, err := expandVars(*p, lookup)
		if err != nil {
			return fmt.Errorf("%q: %w", member, err)
		}
		*p = v
		return nil
	}
	if err := one("command", f.Command); err != nil {
		return nil, err
	}
	if err := one("url", f.URL); err != nil {
		return nil, err
	}
	if f.Args != nil {
		args := append([]string(nil), *f.Args...)
		for i := range args {
			if err := one("args", &args[i]); err != nil {
				return nil, err
			}
		}
		f.Args = &args
	}
	for _, m := range []struct {
		member string
		vars   *map[string]string
	}{{"env", &f.Env}, {"headers", &f.Headers}} {
		if *m.vars == nil {
			continue
		}
		out := make(map[string]string, len(*m.vars))
		for k, v := range *m.vars {
			if err := one(m.member, &v); err != nil {
				return nil, err
			}
			out[k] = v
		}
		*m.vars = out
	}
	if f.OAuth != nil {
		o := *f.OAuth
		if err := one("oauth.clientSecret", &o.ClientSecret); err != nil {
			return nil, err
		}
		if o.IdP != nil {
			idp := *o.IdP
			if err := one("oauth.idp.clientSecret", &idp.ClientSecret); err != nil {
				return nil, err
			}
			if err := one("oauth.idp.idToken", &idp.IDToken); err != nil {
				return nil, err
			}
			o.IdP = &idp
		}
		f.OAuth = &o
	}
	return secretVars, nil
}
