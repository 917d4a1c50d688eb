package dev

// Variables through which `devstack exec` hands a running stack to tests;
// the testsupport package reads them and starts its own stack when they
// are absent.
const (
	EnvTestPostgres    = "PRESSROOM_TEST_POSTGRES_URL"
	EnvTestTemporal    = "PRESSROOM_TEST_TEMPORAL_ADDRESS"
	EnvTestS3Endpoint  = "PRESSROOM_TEST_S3_ENDPOINT"
	EnvTestS3AccessKey = "PRESSROOM_TEST_S3_ACCESS_KEY"
	EnvTestS3SecretKey = "PRESSROOM_TEST_S3_SECRET_KEY"
)

// TestEnv is the environment that hands s to tests.
func TestEnv(s *Stack) []string {
	return []string{
		EnvTestPostgres + "=" + s.Postgres.ServerURL,
		EnvTestTemporal + "=" + s.TemporalAddress,
		EnvTestS3Endpoint + "=" + s.S3Endpoint,
		EnvTestS3AccessKey + "=" + s.Storage.AccessKey,
		EnvTestS3SecretKey + "=" + s.Storage.SecretKey,
	}
}
