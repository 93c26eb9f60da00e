package sweep

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrRefused marks what headlab refuses as bad input: a file that is not
// a headlab sweep database (or is newer than this headlab), a merge whose
// inputs conflict. The file concerned is left as it was.
var ErrRefused = errors.New("refused")

type refusal struct{ msg string }

func (r refusal) Error() string        { return r.msg }
func (r refusal) Is(target error) bool { return target == ErrRefused }

// refusef makes a refusal, on one line: SQLite quotes a malformed
// schema's text, newlines and all, in its errors.
func refusef(format string, args ...any) error {
	return refusal{strings.Join(strings.Fields(fmt.Sprintf(format, args...)), " ")}
}

// sqliteMagic opens every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// sniff looks at the file at path without SQLite: fresh when it is absent
// or empty (a new database), wal when its header says WAL mode. Anything
// but a SQLite file is refused here, before SQLite opens it.
func sniff(path string) (fresh, wal bool, err error) {
	if path == "" {
		return false, false, refusef("database path is empty")
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true, false, nil
	}
	if err != nil {
		return false, false, refusef("database %s: %v", path, errors.Unwrap(err))
	}
	if !fi.Mode().IsRegular() {
		return false, false, refusef("database %s is not a regular file", path)
	}
	if fi.Size() == 0 {
		return true, false, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return false, false, refusef("database %s: %v", path, errors.Unwrap(err))
	}
	defer f.Close()
	// The header is 100 bytes; bytes 18 and 19 (the write and read
	// versions) are 2 in WAL mode. SQLite takes a file as WAL when either
	// is, so a file with only one of them set is treated as WAL here too:
	// read any other way, it would make a log and shared memory beside it
	// (and wait on recovering them).
	hdr := make([]byte, 100)
	if _, err := io.ReadFull(f, hdr); err != nil || !bytes.HasPrefix(hdr, []byte(sqliteMagic)) {
		return false, false, refusef("%s is not a SQLite database", path)
	}
	return false, hdr[18] == 2 || hdr[19] == 2, nil
}

// uri is path as a SQLite URI with params: an absolute path, with the
// characters a URI gives meaning to escaped.
func uri(path, params string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(abs)
	return "file:" + esc + "?" + params, nil
}

// openRead opens the SQLite file at path read-only, changing nothing on
// disk: mode=ro, or immutable=1 where the file is in WAL mode and either
// has no log beside it (nobody has it open: a database shipped in WAL
// mode) or the shared-memory file beside it cannot be made (a read-only
// directory, a 0444 file). note says when a log was left unread.
func openRead(path string, wal bool) (db *sql.DB, note string, err error) {
	walInfo, werr := os.Stat(path + "-wal")
	hasLog := werr == nil
	open := func(params string) (*sql.DB, error) {
		u, err := uri(path, params)
		if err != nil {
			return nil, err
		}
		db, err := sql.Open("sqlite", u)
		if err != nil {
			return nil, err
		}
		db.SetMaxOpenConns(1)
		// Reading the schema is the first read of the file's pages.
		var n int
		if err := db.QueryRow("SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
			db.Close()
			return nil, err
		}
		return db, nil
	}
	const immutable = "immutable=1&mode=ro"
	if wal && !hasLog {
		db, err = open(immutable)
	} else {
		db, err = open("mode=ro&_pragma=busy_timeout(10000)")
		if err != nil && wal {
			var ierr error
			if db, ierr = open(immutable); ierr == nil {
				err = nil
				if walInfo.Size() > 0 {
					note = fmt.Sprintf("%s-wal cannot be read from here (it needs a shared-memory file beside it); reading %s without the runs still in that log", path, path)
				}
			}
		}
	}
	if err != nil {
		return nil, "", refusef("database %s: %v", path, err)
	}
	return db, note, nil
}
