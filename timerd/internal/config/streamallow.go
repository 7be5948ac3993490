package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Stream names are fenced (issue 31): on Redis a stream name is any key, and
// an XADD to a key of the store's own that does not exist yet creates a
// stream there, after which the store's scripts fail on it with WRONGTYPE.
// So a stream task may name only a stream of -stream-allow, and never a key
// of the store's key space, {<namespace>.…} (rediswheel's {ns.N} and
// {ns.periodic}, timerd's {ns.timerd}), whichever the store: the API
// checks at create and the workers again at delivery, with CheckName.

// splitAllow reads -stream-allow: comma-separated, spaces around entries
// dropped. An empty entry is kept, for checkAllow to refuse.
func splitAllow(v string) []string {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	parts := strings.Split(v, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}

// storeKeys is the start of every key of the store of namespace ns.
func storeKeys(ns string) string { return "{" + ns + "." }

// checkAllow refuses an entry that is empty, allows every key ("*"), or
// names or covers a key of the store's.
func checkAllow(allow []string, ns string) error {
	reserved := storeKeys(ns)
	for _, a := range allow {
		prefix, isPrefix := strings.CutSuffix(a, "*")
		switch {
		case a == "":
			return errors.New("an empty entry")
		case strings.Contains(prefix, "*"):
			return fmt.Errorf("%q: * may only end an entry (a prefix)", a)
		case isPrefix && prefix == "":
			return errors.New(`"*" would let stream tasks write any key: name the streams, or a prefix of them`)
		case strings.HasPrefix(prefix, reserved) || isPrefix && strings.HasPrefix(reserved, prefix):
			return fmt.Errorf("%q reaches the store's own keys (%s…)", a, reserved)
		}
	}
	return nil
}

// CheckName reports why a stream task may not append to the stream name
// in a store of namespace ns, or nil if it may.
func (s Streams) CheckName(name, ns string) error {
	if len(s.Allow) == 0 {
		return errors.New("no stream is allowed: name them with -stream-allow (TIMERD_STREAM_ALLOW)")
	}
	if strings.HasPrefix(name, storeKeys(ns)) {
		return fmt.Errorf("%q is a key of the store's (%s…)", name, storeKeys(ns))
	}
	if slices.ContainsFunc(s.Allow, func(a string) bool {
		if prefix, ok := strings.CutSuffix(a, "*"); ok {
			return strings.HasPrefix(name, prefix)
		}
		return name == a
	}) {
		return nil
	}
	return fmt.Errorf("%q is not among the streams of -stream-allow (TIMERD_STREAM_ALLOW)", name)
}
