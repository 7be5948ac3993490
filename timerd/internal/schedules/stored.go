package schedules

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// The stored form of a Definition, the value under its name in the HASH:
//
//	{"v":1,"name":"nightly","every_ms":3600000,"cron":"","max_attempts":3,
//	 "callback":{"v":1,"url":"https://...","method":"POST",...}}
//
// callback is durable's own stored form of an HTTPTask (EncodeHTTPTask,
// read back by DecodeHTTPTask), which is also the payload every occurrence
// carries. Fields are only ever added; a change an older process would
// misread gets a new version, and a process skips (and logs) definitions of a
// version it does not read rather than guess.
type stored struct {
	Version     int             `json:"v"`
	Name        string          `json:"name"`
	EveryMS     int64           `json:"every_ms,omitempty"`
	Cron        string          `json:"cron,omitempty"`
	MaxAttempts int             `json:"max_attempts,omitempty"`
	Callback    json.RawMessage `json:"callback"`
}

const storedVersion = 1

// encode returns d's stored form, after the checks of Validate.
func encode(d Definition) ([]byte, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	payload, err := durable.EncodeHTTPTask(d.Callback)
	if err != nil {
		return nil, err
	}
	return json.Marshal(stored{
		Version: storedVersion, Name: d.Name, EveryMS: d.Every.Milliseconds(), Cron: d.Cron,
		MaxAttempts: d.MaxAttempts, Callback: payload,
	})
}

// decode reads a stored form back, refusing one that Put would not have
// written.
func decode(raw []byte) (Definition, error) {
	var s stored
	if err := json.Unmarshal(raw, &s); err != nil {
		return Definition{}, fmt.Errorf("schedules: stored definition: %w", err)
	}
	if s.Version != storedVersion {
		return Definition{}, fmt.Errorf("schedules: stored definition %q: version %d, this code reads %d", s.Name, s.Version, storedVersion)
	}
	cb, err := durable.DecodeHTTPTask(s.Callback)
	if err != nil {
		return Definition{}, fmt.Errorf("schedules: stored definition %q: %w", s.Name, err)
	}
	d := Definition{Name: s.Name, Every: time.Duration(s.EveryMS) * time.Millisecond, Cron: s.Cron,
		Callback: cb, MaxAttempts: s.MaxAttempts}
	if err := d.Validate(); err != nil {
		return Definition{}, fmt.Errorf("schedules: stored definition %q: %w", s.Name, err)
	}
	return d, nil
}

// version names a stored form's content: 12 hex digits of its SHA-256. Equal
// definitions have equal versions in every process, so they share one
// periodic schedule; 48 bits make a collision between two versions of one
// name practically impossible.
func version(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:6])
}

// VersionOf returns the Version d will have once Put, or Validate's error.
func VersionOf(d Definition) (string, error) {
	raw, err := encode(d)
	if err != nil {
		return "", err
	}
	return version(raw), nil
}

// periodicName is the periodic schedule running a definition's version.
func periodicName(name, version string) string { return name + "~" + version }
