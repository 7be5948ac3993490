// Package config is timerd's configuration: flags with environment
// fallbacks (README.md, "Configuration"), validated before anything starts.
//
// Contract (implemented by the server helper):
//
//	type Config struct { Listen, RedisURL, Namespace string; RedisCluster, Workers bool; Shards, Concurrency int;
//	    Token string; AllowCallback []string; MaxBody int64; Rate float64; Retention, ShutdownGrace time.Duration;
//	    History int; LogLevel slog.Level }
//	func Parse(args []string, getenv func(string) string) (Config, error)
//	// Parse refuses a non-loopback Listen without a token (ErrNoToken), and every bad value with an
//	// error naming the flag.
package config
