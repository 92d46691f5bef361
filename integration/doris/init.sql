-- Every database and table that dorisio's e2e suite (integration/e2e) and
-- the example command (pipelines/load, synthetic mode, 4 tables) load into.
--
-- integration/doris/run-e2e.sh runs it through the compose file's init
-- service; by hand: mysql -h127.0.0.1 -P9030 -uroot < integration/doris/init.sql
--
-- The e2e tests read this file too: their local server creates these very
-- tables, so a table the tests or the example use and this file lacks fails
-- `go test ./integration/e2e` on any machine. Keep each statement a
-- CREATE DATABASE, or a CREATE TABLE IF NOT EXISTS (or LIKE another table)
-- with fully qualified names: that is what the tests' reader understands;
-- doristest takes the statement itself.

CREATE DATABASE IF NOT EXISTS dorisio_test;

-- Rows carry a per-run `run` value, so runs never see each other's rows.
CREATE TABLE IF NOT EXISTS dorisio_test.e2e_events (
  run VARCHAR(40) NOT NULL,
  id BIGINT NOT NULL,
  name VARCHAR(16)
) DUPLICATE KEY(run, id) DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ("replication_num" = "1");

CREATE TABLE IF NOT EXISTS dorisio_test.e2e_strict LIKE dorisio_test.e2e_events;

CREATE DATABASE IF NOT EXISTS demo;

-- internal/synth.EventsDDL: the synthetic events of pipelines/load.
CREATE TABLE IF NOT EXISTS demo.events_0 (
  id BIGINT NOT NULL,
  ts DATETIME,
  user_id BIGINT,
  kind VARCHAR(16),
  amount DECIMAL(12,2),
  note VARCHAR(64)
) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 4 PROPERTIES ("replication_num" = "1");

CREATE TABLE IF NOT EXISTS demo.events_1 LIKE demo.events_0;
CREATE TABLE IF NOT EXISTS demo.events_2 LIKE demo.events_0;
CREATE TABLE IF NOT EXISTS demo.events_3 LIKE demo.events_0;
