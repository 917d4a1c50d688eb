package oauth

// SignJWS lets the external tests forge tokens with craftSign (tokens_internal_test.go).
var SignJWS = craftSign
