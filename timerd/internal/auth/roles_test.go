package auth

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Role's table, cell by cell.
func TestRoleCan(t *testing.T) {
	want := map[Role][4]bool{ // read, complete, operate, admin
		RoleAdmin:      {true, true, true, true},
		RoleOperator:   {true, true, true, false},
		RoleReadOnly:   {true, false, false, false},
		RoleCompletion: {false, true, false, false},
		"root":         {false, false, false, false},
	}
	for r, cells := range want {
		for g, ok := range cells {
			assert.Equal(t, ok, r.Can(Grant(g)), "%s grant %d", r, g)
		}
	}
}

// Each credential's token identifies it, by header and by its own session
// cookie; a cookie names the credential it was issued to, and a name no
// longer configured, or the same name with another token, is no session.
func TestCredentials(t *testing.T) {
	creds := []Credential{{Name: "root", Role: RoleAdmin, Token: "t-admin"}, {Name: "viewer", Role: RoleReadOnly, Token: "t-view"}}
	c, err := NewCredentials(creds)
	require.NoError(t, err)
	cr, ok := c.Identify(request("Bearer t-view", ""))
	require.True(t, ok)
	assert.Equal(t, creds[1], cr)
	w := httptest.NewRecorder()
	c.SetSessionAs(w, httptest.NewRequest("POST", "/ui/login", nil), creds[1])
	ck := w.Result().Cookies()[0].Value
	cr, ok = c.Identify(request("", ck))
	require.True(t, ok)
	assert.Equal(t, "viewer", cr.Name)

	rotated, err := NewCredentials([]Credential{creds[0], {Name: "viewer", Role: RoleReadOnly, Token: "t-view2"}})
	require.NoError(t, err)
	_, ok = rotated.Identify(request("", ck))
	assert.False(t, ok, "the token changed: its sessions end")
	_, ok = New("t-admin").Identify(request("", ck))
	assert.False(t, ok, "no such credential")

	for _, bad := range [][]Credential{
		{{Name: "a", Role: RoleAdmin, Token: "x"}, {Name: "a", Role: RoleReadOnly, Token: "y"}},
		{{Name: "a", Role: RoleAdmin, Token: "x"}, {Name: "b", Role: RoleReadOnly, Token: "x"}},
		{{Name: "a b", Role: RoleAdmin, Token: "x"}},
		{{Name: "a", Role: "root", Token: "x"}},
		{{Name: "a", Role: RoleAdmin, Token: ""}},
	} {
		_, err := NewCredentials(bad)
		assert.ErrorIs(t, err, ErrCredentials, "%v", bad)
	}
}
