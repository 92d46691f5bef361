module github.com/dorisbeam/dorisbeam

go 1.26.0

require (
	github.com/apache/beam/sdks/v2 v2.77.0 // indirect
	github.com/golang/mock v1.6.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
)
