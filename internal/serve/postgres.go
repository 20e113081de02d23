package serve

import _ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
