package netguard

import "net/netip"

// Class is what the address rule says of one address.
type Class uint8

const (
	// Reachable: nothing in the rule refuses the address.
	Reachable Class = iota
	// Internal: an internal address outside the allowed networks, or an
	// address that is invalid or carries an IPv6 zone (never exempt).
	Internal
	// Metadata: a cloud metadata endpoint in any embedded form, refused even
	// inside the allowed networks.
	Metadata
)

// CheckAddr is the address rule every caller applies (see the package doc,
// The address rule): a cloud metadata address is Metadata whatever allowed
// says; an invalid or zoned address is Internal; an address IsInternal
// reports is Internal unless it lies in one of allowed (InPrefixes);
// anything else is Reachable. The reason names the metadata endpoint, the
// scope, or the internal range, and is "" for Reachable.
func CheckAddr(a netip.Addr, allowed []netip.Prefix) (Class, string) {
	if !a.IsValid() {
		return Internal, "an invalid address"
	}
	if IsMetadata(a.String()) {
		return Metadata, "a cloud metadata endpoint"
	}
	if z := a.Zone(); z != "" {
		return Internal, "a scoped address (zone " + z + ")"
	}
	if in, why := IsInternal(a); in && !InPrefixes(a, allowed) {
		return Internal, why
	}
	return Reachable, ""
}
