# Network rules: The http tool: URL analysis, schemes, credentials in
# URLs, non-public addresses in any notation, and the allowed_domains
# egress allowlist.
package claw.gate

import data.claw.lib

# http_method is the request method, GET when none is given.
http_method := upper(input.action.args.method) if {
	is_string(input.action.args.method)
	input.action.args.method != ""
} else := "GET" if {
	not input.action.args.method
} else := "INVALID"

# allowed_hosts are the allowed_domains entries, lower case, without a
# trailing dot.
allowed_hosts := {trim_suffix(lower(d), ".") | some d in allowed_domains}

# host_allowed: "*" opens every public host, "*.example.com" its
# subdomains at any depth (not example.com itself), anything else is an
# exact host.
default host_allowed := false

host_allowed if {
	"*" in allowed_hosts
	url.host != ""
}

host_allowed if url.host in allowed_hosts

host_allowed if {
	some d in allowed_hosts
	startswith(d, "*.")
	endswith(url.host, substring(d, 1, -1))
}

scheme_allowed if url.scheme in {"http", "https"}

# url is the analysed URL with every field present, so that a missing
# field cannot make a denying rule undefined.
url_defaults := {"raw": "", "scheme": "", "host": "", "port": 0, "userinfo": false, "ip": "", "class": "", "error": ""}

url := object.union(url_defaults, input.url) if {
	url_is_object
} else := url_defaults

url_is_object if is_object(input.url)

url_analysed if {
	is_object(input.url)
	not url_error
}

url_error if {
	url_is_object
	is_string(url.error)
	url.error != ""
}

url_msgs contains sprintf("the url cannot be used: %s", [url.error]) if url_error

url_msgs contains "the http action has no analysed url" if not url_is_object

# METADATA
# title: Invalid URL
# description: The URL could not be parsed; what cannot be analysed is not fetched.
# custom:
#   id: http.invalid_url
#   severity: critical
deny contains r if {
	input.kind == "http"
	some msg in url_msgs
	r := lib.reason(rego.metadata.rule(), msg)
}

# METADATA
# title: URL scheme not allowed
# description: Only http and https URLs are fetched (no file, ftp, gopher, data, ...).
# custom:
#   id: http.scheme
#   severity: high
deny contains r if {
	input.kind == "http"
	url_analysed
	not scheme_allowed
	r := lib.reason(rego.metadata.rule(), sprintf("the scheme %v is not http or https", [url.scheme]))
}

# METADATA
# title: Credentials in the URL
# description: A user[:password]@ part in the URL leaks credentials and is a classic host-confusion trick.
# custom:
#   id: http.userinfo
#   severity: high
deny contains r if {
	input.kind == "http"
	url_analysed
	url.userinfo == true
	r := lib.reason(rego.metadata.rule(), "the url carries user information (user@host)")
}

# METADATA
# title: Non-public address
# description: >-
#   The host is, or names, a loopback, private, link-local, cloud
#   metadata, unspecified, multicast or reserved address, in any notation.
# custom:
#   id: http.private_address
#   severity: high
deny contains r if {
	input.kind == "http"
	url_analysed
	url.class != "public"
	r := lib.reason(rego.metadata.rule(), sprintf("%v is a %v address, not a public one", [url.host, url.class]))
}

# METADATA
# title: Domain not allowed
# description: >-
#   allowed_domains is the egress allowlist of the http tool at every
#   autonomy; an empty list allows no host.
# custom:
#   id: http.domain_not_allowed
#   severity: high
deny contains r if {
	input.kind == "http"
	url_analysed
	not host_allowed
	r := lib.reason(rego.metadata.rule(), sprintf("%v is not on allowed_domains", [url.host]))
}
