package serve

import (
	"database/sql"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
)

var pgN atomic.Int64

// postgresDSN: temporary, until internal/testservers lands.
func postgresDSN(t *testing.T, required bool) string {
	t.Helper()
	base := os.Getenv("TRACEGAP_TEST_PG")
	if base == "" {
		if required {
			t.Skip("no postgres")
		}
		return ""
	}
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), pgN.Add(1))
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	return "postgres://postgres@/" + name + "?host=/tmp/pgm&sslmode=disable"
}
