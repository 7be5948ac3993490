package config

import (
	"fmt"
	"io"
	"slices"
)

// StoreFlags are the settings that name the store: what timerd migrate
// reads (the other flags of the server are taken and ignored, so that one
// environment serves both).
var StoreFlags = []string{"store", "store-file", "data-dir", "redis-url", "redis-cluster", "namespace"}

// UsageOf writes the settings named, in the order of Usage, to w.
func UsageOf(w io.Writer, names []string) {
	for _, s := range settings {
		if slices.Contains(names, s.name) {
			fmt.Fprintf(w, "  -%s (%s, default %q)\n    \t%s\n", s.name, s.env, s.def, s.usage)
		}
	}
}
