package ssrf

// SetResolver makes g resolve names with r, for tests.
func (g *Guard) SetResolver(r resolver) { g.resolver = r }

// Resolver is the interface SetResolver takes.
type Resolver = resolver
