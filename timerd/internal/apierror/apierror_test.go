package apierror

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestWrite(t *testing.T) {
	for code, want := range map[Code]int{
		InvalidArgument: 400, DestinationForbidden: 400, Unauthenticated: 401, NotFound: 404,
		MethodNotAllowed: 405, Conflict: 409, TooLarge: 413, UnsupportedMedia: 415,
		RateLimited: 429, Internal: 500, Unavailable: 503, Code("made-up"): 500,
	} {
		w := httptest.NewRecorder()
		Write(w, code, "callback.url", "bad <url>")
		assert.Equal(t, want, w.Code, code)
		assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
		var b Body
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &b))
		assert.Equal(t, Detail{Code: code, Message: "bad <url>", Field: "callback.url"}, b.Error)
	}
	w := httptest.NewRecorder()
	Write(w, NotFound, "", "no such task")
	assert.JSONEq(t, `{"error":{"code":"not_found","message":"no such task"}}`, w.Body.String(), "field is left out when empty")
	assert.Equal(t, http.StatusNotFound, w.Code)
}
