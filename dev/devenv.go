package dev

import "strings"

// LocalFrontEndOrigins are the origins of the usual front-end dev servers
// (Vite 5173, Next.js/CRA 3000, Django/Hugo/python -m http.server 8000,
// Angular 4200), on localhost and on 127.0.0.1: `make dev` lets their pages
// call the API, so a front-end developer's first fetch works. Production
// keeps PRESSROOM_CORS_ORIGINS empty unless told otherwise.
var LocalFrontEndOrigins = func() []string {
	var out []string
	for _, host := range []string{"localhost", "127.0.0.1"} {
		for _, port := range []string{"5173", "3000", "8000", "4200"} {
			out = append(out, "http://"+host+":"+port)
		}
	}
	return out
}()

// DevServerEnv is the environment `make dev` adds for its API and worker,
// on top of the stack's addresses: settings that are right on a
// developer's machine and wrong in production. A variable the developer
// set already (getenv answers non-empty) is left to them.
func DevServerEnv(getenv func(string) string) []string {
	env := []string{
		"PRESSROOM_HTTP_ADDR=127.0.0.1:8080",
		"PRESSROOM_PUBLIC_URL=http://127.0.0.1:8080",
		// Webhooks may reach receivers on this machine in development.
		"PRESSROOM_WEBHOOK_ALLOW_PRIVATE=true",
		// serve and worker accept the secret keys' development defaults.
		"PRESSROOM_DEV=true",
	}
	if getenv("PRESSROOM_CORS_ORIGINS") == "" {
		env = append(env, "PRESSROOM_CORS_ORIGINS="+strings.Join(LocalFrontEndOrigins, ","))
	}
	return env
}
