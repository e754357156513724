# Network rules: The http tool (URL analysis, schemes, credentials in
# URLs, non-public addresses in any notation) and the network destinations
# of shell commands, both held to the allowed_domains egress allowlist.
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

host_allowed if name_allowed(url.host)

# name_allowed(h): "*" opens every public host, "*.example.com" its
# subdomains at any depth (not example.com itself), anything else is an
# exact host.
name_allowed(h) if {
	"*" in allowed_hosts
	h != ""
}

name_allowed(h) if h in allowed_hosts

name_allowed(h) if {
	some d in allowed_hosts
	startswith(d, "*.")
	endswith(h, substring(d, 1, -1))
}

# dest_allowed(d): a shell destination on allowed_domains, or a package
# manager's default registry (how "registry") on allowed_registries. A
# registry host named in a URL (curl https://pypi.org/...) is judged by
# allowed_domains alone.
dest_allowed(d) if name_allowed(d.host)

dest_allowed(d) if {
	d.how == "registry"
	registry_allowed(d.host)
}

registry_hosts := {trim_suffix(lower(r), ".") | some r in allowed_registries}

registry_allowed(h) if h in registry_hosts

registry_allowed(h) if {
	some r in registry_hosts
	startswith(r, "*.")
	endswith(h, substring(r, 1, -1))
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

# ---------------------------------------------------------------------------
# Shell destinations: what every network client and package manager of a
# shell command connects to (input.destinations, canonical like the http
# tool's URL). Package managers' default registries are destinations too.
# A plugin's declared hosts are its destinations (how "plugin"), and so
# are the hosts of the external agent a delegate call names (how
# "delegate"), judged by the same rules.

net_dests := input.destinations if {
	input.kind in {"shell", "plugin", "delegate"}
	is_array(input.destinations)
} else := []

# The rules on destinations add to net_denials and net_asks, which are
# only evaluated when a shell command has destinations at all. The rules
# that read destinations first test input.destinations[0] = _ (there is
# a first destination, whatever it is): OPA's index answers that test,
# so for an action without destinations they are not even entered.
has_dests if some _ in net_dests

deny contains r if {
	input.destinations[0] = _
	has_dests
	some r in net_denials
}

ask contains r if {
	input.destinations[0] = _
	has_dests
	some r in net_asks
}

known_dest(d) if {
	d.known == true
	d.error == ""
}

public_dest(d) if {
	known_dest(d)
	d.class == "public"
}

dest_label(d) := sprintf("%s:%d", [d.host, d.port]) if {
	d.port > 0
} else := d.host

domain_msgs contains sprintf("%s connects to %s (%s), which is not on %s", [d.command, dest_label(d), d.how, allowlist_of(d)]) if {
	some d in net_dests
	public_dest(d)
	not dest_allowed(d)
}

allowlist_of(d) := "allowed_domains or allowed_registries" if {
	d.how == "registry"
} else := "allowed_domains"

# A name built at run time under a written domain ($(base64 .env).x.com)
# reaches that domain's servers whatever the built part.
domain_msgs contains sprintf("%s connects to a name under %s (%s), which is not on allowed_domains", [d.command, d.suffix, d.raw]) if {
	some d in net_dests
	not known_dest(d)
	d.suffix != ""
	not suffix_allowed(d.suffix)
}

# suffix_allowed(s): every name below s is allowed ("*", or "*.p" for p
# that is s or a parent of s).
suffix_allowed(_) if "*" in allowed_hosts

suffix_allowed(s) if {
	some h in allowed_hosts
	startswith(h, "*.")
	domain_under(s, substring(h, 2, -1))
}

domain_under(s, p) if s == p

domain_under(s, p) if endswith(s, concat("", [".", p]))

# METADATA
# title: Destination not allowed
# description: >-
#   A shell command connects to a host that is not on allowed_domains (a
#   URL, host, proxy, --resolve or --connect-to target, git remote URL,
#   DNS name or package registry), or to a name built at run time under a
#   domain that is not, at every autonomy.
# custom:
#   id: net.domain_not_allowed
#   severity: high
net_denials contains r if {
	some msg in domain_msgs
	r := lib.reason(rego.metadata.rule(), msg)
}

# METADATA
# title: Non-public destination
# description: >-
#   A shell command connects to a loopback, private, link-local, cloud
#   metadata, unspecified, multicast or reserved address, in any notation.
# custom:
#   id: net.private_address
#   severity: high
net_denials contains r if {
	some d in net_dests
	known_dest(d)
	d.class != "public"
	not private_dest_allowed(d)
	r := lib.reason(rego.metadata.rule(), sprintf("%s connects to %s, a %s address", [d.command, dest_label(d), d.class]))
}

# METADATA
# title: Credentials in a destination URL
# description: A user[:password]@ part in an http(s) URL is a classic host-confusion trick.
# custom:
#   id: net.userinfo
#   severity: high
net_denials contains r if {
	some d in net_dests
	known_dest(d)
	d.userinfo == true
	d.scheme in {"http", "https", ""}
	r := lib.reason(rego.metadata.rule(), sprintf("%s: %s carries user information (user@host)", [d.command, d.raw]))
}

# METADATA
# title: Unparseable destination
# description: A destination that cannot be parsed is not connected to.
# custom:
#   id: net.invalid_destination
#   severity: high
net_denials contains r if {
	some d in net_dests
	d.error != ""
	r := lib.reason(rego.metadata.rule(), sprintf("%s: the destination %q cannot be used: %s", [d.command, d.raw, d.error]))
}

# METADATA
# title: Destination not known statically
# description: >-
#   A destination is built at run time (a variable, a substitution, a
#   name made from data as in dig $(...).example.com, a config file
#   given to curl -K): it cannot be checked against allowed_domains.
# custom:
#   id: net.unknown_destination
#   severity: medium
net_asks contains r if {
	some d in net_dests
	not known_dest(d)
	d.error == ""
	d.how != "remote"
	r := lib.reason(rego.metadata.rule(), sprintf("%s connects to %s, which is not known before it runs", [d.command, d.raw]))
}

# METADATA
# title: Sends data or changes remote state
# description: >-
#   An upload, a POST, a push, a publish or a raw connection to an
#   allowlisted host (or to a configured git remote) sends workspace data
#   out: supervised asks, full allows.
# custom:
#   id: net.sends
#   severity: medium
supervised_ask contains r if {
	input.destinations[0] = _
	has_dests
	some d in net_dests
	d.sends == true
	sends_allowed(d)
	r := lib.reason(rego.metadata.rule(), sprintf("%s sends data to %s", [d.command, sends_label(d)]))
}

sends_allowed(d) if {
	public_dest(d)
	dest_allowed(d)
}

# a non-public destination allow_private_cidrs opens (an internal mirror)
sends_allowed(d) if {
	known_dest(d)
	d.class != "public"
	private_dest_allowed(d)
	name_allowed(d.host)
}

sends_allowed(d) if d.how == "remote"

sends_label(d) := sprintf("the git remote %s", [d.raw]) if {
	d.how == "remote"
} else := dest_label(d)

# net_hosts are the host:port pairs the action's plan admits: the
# allowlisted destinations, and for a configured git remote every exact
# allowlisted host (the egress proxy checks each connection against them).
net_hosts contains sprintf("%s:%d", [host_port_host(d.host), d.port]) if {
	input.destinations[0] = _
	some d in net_dests
	public_dest(d)
	dest_allowed(d)
	d.port > 0
}

# a non-public destination that allow_private_cidrs opens (an internal
# mirror) and allowed_domains names
net_hosts contains sprintf("%s:%d", [host_port_host(d.host), d.port]) if {
	input.destinations[0] = _
	some d in net_dests
	known_dest(d)
	d.class != "public"
	private_dest_allowed(d)
	name_allowed(d.host)
	d.port > 0
}

net_hosts contains sprintf("%s:443", [h]) if {
	input.destinations[0] = _
	some d in net_dests
	d.how == "remote"
	some h in allowed_hosts
	not contains(h, "*")
}

host_port_host(h) := sprintf("[%s]", [h]) if {
	contains(h, ":")
} else := h
