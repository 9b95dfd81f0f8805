package auth

import (
	"sync"
)

// keyCache keeps the principals of API keys between requests, for as long
// as the store's access epoch has not moved since they were read. Every
// committed write and every revocation in any process moves the epoch
// (store.DB.AccessChanged), so a revoked key is refused by the first
// request after RevokeKey returns, in this process and in every other: the
// cache only spares the lookups of a key nothing has touched. Stores
// without an epoch (PostgreSQL) keep nothing. Failed authentications are
// never kept.
type keyCache struct {
	mu      sync.Mutex
	entries map[string]cachedKey // by secret hash
}

type cachedKey struct {
	epoch uint64
	p     Principal
}

// maxCachedKeys bounds the cache; when full it starts over.
const maxCachedKeys = 10_000

func (c *keyCache) get(hash string, epoch uint64) (*Principal, bool) {
	c.mu.Lock()
	e, ok := c.entries[hash]
	c.mu.Unlock()
	if !ok || e.epoch != epoch {
		return nil, false
	}
	p := e.p // a copy: callers may not change what the cache holds
	return &p, true
}

func (c *keyCache) put(hash string, epoch uint64, p *Principal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxCachedKeys {
		c.entries = make(map[string]cachedKey)
	}
	c.entries[hash] = cachedKey{epoch: epoch, p: *p}
}
