package completion

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A credential verifies for its task under any of the keys, gives back the
// durable token, and is refused changed in any byte, for another task,
// under other keys, or in the bare and old durable forms.
func TestMintVerify(t *testing.T) {
	old, cur := []byte(strings.Repeat("o", 32)), []byte(strings.Repeat("n", 32))
	k := New([][]byte{old})
	c := k.Mint("order:1", 3, "2.17")
	tok, err := k.Verify("order:1", c)
	require.NoError(t, err)
	assert.Equal(t, "2.17", tok)

	rotated := New([][]byte{cur, old})
	tok, err = rotated.Verify("order:1", c)
	require.NoError(t, err, "the old key still verifies after rotation")
	assert.Equal(t, "2.17", tok)
	assert.NotEqual(t, c, rotated.Mint("order:1", 3, "2.17"), "the first key signs")
	_, err = New([][]byte{cur}).Verify("order:1", c)
	assert.ErrorIs(t, err, ErrCredential, "the old key dropped")

	for i := range c {
		bad := []byte(c)
		bad[i] ^= 1
		_, err := k.Verify("order:1", string(bad))
		assert.ErrorIs(t, err, ErrCredential, "byte %d changed", i)
	}
	for _, bad := range []string{"", "2.17", "2.3.0.0.17", c + "x", "v1:03:2.17:" + c[strings.LastIndex(c, ":")+1:]} {
		_, err := k.Verify("order:1", bad)
		assert.ErrorIs(t, err, ErrCredential, bad)
	}
	_, err = k.Verify("order:2", c)
	assert.ErrorIs(t, err, ErrCredential, "another task")
	assert.NotEqual(t, DeriveKey("a"), DeriveKey("b"))
}
