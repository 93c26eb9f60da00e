package sweep

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultLease is how long a claim on a pair lasts unless its owner renews
// it; the owner renews every third of it while it works. A process that
// dies stops renewing, and its pairs go to another sweep once the lease
// ends, or at once when the other runs on the same host and sees the
// owner's PID gone.
const DefaultLease = time.Minute

// newOwner names this process in the claims table: host:pid:nonce (the
// nonce tells apart two Runs in one process and a reused PID).
func newOwner() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s:%d:%s", strings.ReplaceAll(host, ":", "_"), os.Getpid(), hex.EncodeToString(b))
}

// ownerDead reports whether owner is a process of this host that no
// longer exists.
func ownerDead(owner string) bool {
	parts := strings.Split(owner, ":")
	if len(parts) != 3 {
		return false
	}
	host, _ := os.Hostname()
	pid, err := strconv.Atoi(parts[1])
	if err != nil || parts[0] != strings.ReplaceAll(host, ":", "_") || pid <= 0 {
		return false
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// claim takes, in one transaction, every pair of ps that no run stores and
// no live claim of another owner holds, for lease from now. It returns
// those (mine), those another process is training (busy), and how many
// were stored already.
func (s *Store) claim(ps []Pair, owner string, lease time.Duration) (mine, busy []Pair, stored int, err error) {
	tx, err := s.db.Begin()
	if err != nil {
		return nil, nil, 0, err
	}
	defer tx.Rollback()
	now := time.Now().UnixMilli()
	for _, p := range ps {
		seed := int64(p.Config.Seed)
		var n int
		if err := tx.QueryRow("SELECT count(*) FROM runs WHERE config_key = ? AND seed = ?", p.Key, seed).Scan(&n); err != nil {
			return nil, nil, 0, err
		}
		if n > 0 && !s.replace.has(RunID{p.Key, p.Config.Seed}) {
			stored++
			continue
		}
		var who string
		var until int64
		switch err := tx.QueryRow("SELECT owner, expires_at FROM claims WHERE config_key = ? AND seed = ?", p.Key, seed).Scan(&who, &until); {
		case err == nil && who != owner && until > now && !ownerDead(who):
			busy = append(busy, p)
			continue
		case err != nil && !errors.Is(err, sql.ErrNoRows):
			return nil, nil, 0, err
		}
		if _, err := tx.Exec("INSERT OR REPLACE INTO claims ("+claimsColumns+") VALUES (?, ?, ?, ?)",
			p.Key, seed, owner, now+lease.Milliseconds()); err != nil {
			return nil, nil, 0, err
		}
		mine = append(mine, p)
	}
	return mine, busy, stored, tx.Commit()
}

// renew extends every claim of owner to lease from now.
func (s *Store) renew(owner string, lease time.Duration) error {
	_, err := s.db.Exec("UPDATE claims SET expires_at = ? WHERE owner = ?", time.Now().Add(lease).UnixMilli(), owner)
	return err
}

// release drops every claim of owner.
func (s *Store) release(owner string) error {
	_, err := s.db.Exec("DELETE FROM claims WHERE owner = ?", owner)
	return err
}

// storeClaimed writes the records of owner's claimed pairs in one
// transaction and drops their claims. A pair that is stored already (its
// claim had lapsed and another process ran it too) keeps the first
// record; landed are the records written.
func (s *Store) storeClaimed(rs []*Record, owner string) (landed []*Record, err error) {
	tx, err := s.db.Begin()
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	for _, r := range rs {
		seed := int64(r.Config.Seed)
		var n int
		if err := tx.QueryRow("SELECT count(*) FROM runs WHERE config_key = ? AND seed = ?", r.Key, seed).Scan(&n); err != nil {
			return nil, err
		}
		if n > 0 && s.replace.take(r.ID()) {
			if err := deleteRun(tx, r.ID()); err != nil {
				return nil, err
			}
			n = 0
		}
		if n == 0 {
			if err := put(tx, r); err != nil {
				return nil, err
			}
			landed = append(landed, r)
		}
		if _, err := tx.Exec("DELETE FROM claims WHERE config_key = ? AND seed = ? AND owner = ?", r.Key, seed, owner); err != nil {
			return nil, err
		}
	}
	return landed, tx.Commit()
}
