package responses

import "github.com/go-json-experiment/json"

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
