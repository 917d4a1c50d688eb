package oauth

// The external tests forge tokens and set up sites with the helpers of
// tokens_internal_test.go.
var (
	SignJWS    = craftSign
	JWTPart    = craftPart
	Unsigned   = craftUnsigned
	OtherKey   = craftOtherKey
	PublicPEMs = craftPublicPEMs
	StolenKey  = craftStolenKey
	TwoSites   = craftSites
)
