package schedules

import (
	"strings"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/stretchr/testify/assert"
)

func TestValidate(t *testing.T) {
	cb := rediswheel.HTTPTask{URL: "https://example.com/hook", Method: "POST"}
	ok := Definition{Name: "nightly-report.v2:eu_1", Every: time.Hour, Callback: cb}
	with := func(change func(*Definition)) Definition {
		d := ok
		change(&d)
		return d
	}
	for _, tc := range []struct {
		name string
		def  Definition
		want error
	}{
		{"every", ok, nil},
		{"cron", with(func(d *Definition) { d.Every, d.Cron = 0, "0 3 * * *" }), nil},
		{"cron with zone", with(func(d *Definition) { d.Every, d.Cron = 0, "CRON_TZ=Europe/Paris 30 9 * * 1-5" }), nil},
		{"descriptor", with(func(d *Definition) { d.Every, d.Cron = 0, "@hourly" }), nil},
		{"max attempts", with(func(d *Definition) { d.MaxAttempts = 3 }), nil},
		{"no name", with(func(d *Definition) { d.Name = "" }), ErrName},
		{"long name", with(func(d *Definition) { d.Name = strings.Repeat("n", MaxNameLen+1) }), ErrName},
		{"slash in name", with(func(d *Definition) { d.Name = "a/b" }), ErrName},
		{"space in name", with(func(d *Definition) { d.Name = "a b" }), ErrName},
		{"tilde in name", with(func(d *Definition) { d.Name = "a~b" }), ErrName},
		{"neither", with(func(d *Definition) { d.Every = 0 }), ErrTiming},
		{"both", with(func(d *Definition) { d.Cron = "* * * * *" }), ErrTiming},
		{"short every", with(func(d *Definition) { d.Every = 999 * time.Millisecond }), ErrEvery},
		{"negative every", with(func(d *Definition) { d.Every = -time.Hour }), ErrEvery},
		{"sub-ms every", with(func(d *Definition) { d.Every = time.Second + time.Microsecond }), ErrEvery},
		{"six fields", with(func(d *Definition) { d.Every, d.Cron = 0, "0 0 3 * * *" }), ErrCron},
		{"bad zone", with(func(d *Definition) { d.Every, d.Cron = 0, "CRON_TZ=Nowhere/City 0 3 * * *" }), ErrCron},
		{"bad field", with(func(d *Definition) { d.Every, d.Cron = 0, "61 * * * *" }), ErrCron},
		{"negative attempts", with(func(d *Definition) { d.MaxAttempts = -1 }), ErrMaxAttempts},
		{"bad url", with(func(d *Definition) { d.Callback.URL = "ftp://example.com/" }), rediswheel.ErrInvalidURL},
		{"bad method", with(func(d *Definition) { d.Callback.Method = "PO ST" }), rediswheel.ErrInvalidMethod},
		{"bad header", with(func(d *Definition) { d.Callback.Header = map[string][]string{"X": {"a\nb"}} }), rediswheel.ErrInvalidHeader},
	} {
		err := tc.def.Validate()
		if tc.want == nil {
			assert.NoError(t, err, tc.name)
		} else {
			assert.ErrorIs(t, err, tc.want, tc.name)
		}
	}
}

func TestCronIsUTCWithoutZone(t *testing.T) {
	d := Definition{Name: "n", Cron: "0 3 * * *", Callback: rediswheel.HTTPTask{URL: "http://h/", Method: "GET"}}
	s, err := d.schedule()
	assert.NoError(t, err)
	from := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	assert.Equal(t, time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC), s.Next(from).UTC())

	d.Cron = "CRON_TZ=Asia/Tokyo 0 3 * * *"
	s, err = d.schedule()
	assert.NoError(t, err)
	assert.Equal(t, time.Date(2026, 1, 1, 18, 0, 0, 0, time.UTC), s.Next(from).UTC(), "03:00 in Tokyo is 18:00 UTC")
}

func TestStoredForm(t *testing.T) {
	d := Definition{Name: "n", Every: 90 * time.Second, MaxAttempts: 4, Callback: rediswheel.HTTPTask{
		URL: "https://example.com/h", Method: "PUT", Header: map[string][]string{"X-A": {"1", "2"}},
		Body: []byte{0, 1, 2}, Timeout: 5 * time.Second,
	}}
	raw, err := encode(d)
	assert.NoError(t, err)
	back, err := decode(raw)
	assert.NoError(t, err)
	assert.Equal(t, d, back)

	raw2, _ := encode(d)
	assert.Equal(t, version(raw), version(raw2), "equal definitions have equal versions")
	d.Callback.Header["X-A"] = []string{"1"}
	raw3, _ := encode(d)
	assert.NotEqual(t, version(raw), version(raw3), "a change of any part changes the version")
	assert.Len(t, version(raw), 12)

	for _, bad := range []string{`nope`, `{"v":2,"name":"n","every_ms":1000,"callback":{"v":1,"url":"http://h/","method":"GET"}}`,
		`{"v":1,"name":"n","every_ms":10,"callback":{"v":1,"url":"http://h/","method":"GET"}}`,
		`{"v":1,"name":"n","every_ms":1000,"callback":{"url":"http://h/"}}`} {
		_, err := decode([]byte(bad))
		assert.Error(t, err, bad)
	}
}
