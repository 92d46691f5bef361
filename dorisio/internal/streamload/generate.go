package streamload

// Mocks for the seams (clock, sleeper, endpoint picker), used by the tests.
//go:generate go run github.com/golang/mock/mockgen -source=config.go -destination=mock_config_test.go -package=streamload
//go:generate go run github.com/golang/mock/mockgen -source=endpoints.go -destination=mock_endpoints_test.go -package=streamload
