-- Tables used by pipelines/load (synthetic mode, 4 tables) and the
-- integration tests. Run with: mysql -h127.0.0.1 -P9030 -uroot < init.sql
CREATE DATABASE IF NOT EXISTS demo;
USE demo;
CREATE TABLE IF NOT EXISTS events_0 (
  id BIGINT NOT NULL, ts DATETIME, user_id BIGINT, kind VARCHAR(16),
  amount DECIMAL(12,2), note VARCHAR(64)
) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 4 PROPERTIES ("replication_num" = "1");
CREATE TABLE IF NOT EXISTS events_1 LIKE events_0;
CREATE TABLE IF NOT EXISTS events_2 LIKE events_0;
CREATE TABLE IF NOT EXISTS events_3 LIKE events_0;
