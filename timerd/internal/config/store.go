package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// The stores timerd runs on (Config.Store).
const (
	// StoreSQLite is one file (Config.StorePath), for one process: the
	// default, which needs nothing installed.
	StoreSQLite = "sqlite"
	// StorePostgres is a PostgreSQL database (Config.StoreURL) migrated by
	// `timerd migrate`, for any number of processes.
	StorePostgres = "postgres"
	// StoreRedis is a Redis server or cluster (Config.RedisURL), for any
	// number of processes.
	StoreRedis = "redis"
)

// sqliteFile is the SQLite store's file in -data-dir.
const sqliteFile = "timerd.db"

// resolveStore sets c.Store, and c.StoreURL, c.StorePath or c.RedisURL, from
// -store (c.store, cleared), -redis-url (c.RedisURL, kept from before -store) and
// -data-dir. It runs after every setting is read. Its errors name the flag
// and never repeat a URL, which may hold a password.
func resolveStore(c *Config) error {
	store := c.store
	c.store = ""
	switch {
	case store == "" && c.RedisURL != "":
		c.Store = StoreRedis
	case store == "" || store == StoreSQLite:
		c.Store, c.StorePath = StoreSQLite, filepath.Join(c.DataDir, sqliteFile)
	case c.RedisURL != "":
		return errors.New("config: give the store once: -store (TIMERD_STORE) or -redis-url (TIMERD_REDIS_URL), not both")
	case strings.HasPrefix(store, "sqlite:"):
		c.Store, c.StorePath = StoreSQLite, strings.TrimPrefix(store, "sqlite:")
		if c.StorePath == "" {
			return errors.New("config: -store (TIMERD_STORE): sqlite: wants a file path, as sqlite:/var/lib/timerd/timerd.db")
		}
	case strings.HasPrefix(store, "redis://"), strings.HasPrefix(store, "rediss://"):
		c.Store, c.RedisURL = StoreRedis, store
	case strings.HasPrefix(store, "postgres://"), strings.HasPrefix(store, "postgresql://"):
		c.Store, c.StoreURL = StorePostgres, store
	default:
		scheme, _, _ := strings.Cut(store, ":")
		return fmt.Errorf("config: -store (TIMERD_STORE): %q is not a store: want sqlite, sqlite:PATH, redis://…, rediss://… or postgres://…", scheme)
	}
	if c.Store != StoreRedis {
		return nil
	}
	// The error names the setting the URL came from.
	from := "-redis-url (TIMERD_REDIS_URL)"
	switch {
	case c.StoreFile != "":
		from = "-store-file (TIMERD_STORE_FILE)"
	case store != "":
		from = "-store (TIMERD_STORE)"
	}
	return checkRedisURL(*c, from)
}
