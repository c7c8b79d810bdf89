/**
 * A header value or list member without the optional whitespace around it. OWS is SP and HTAB only
 * (RFC 9110 §5.6.3): String#trim would also strip U+00A0, which is the obs-text byte 0xA0 in a
 * header, and so turn a malformed value into a valid one.
 */
export function trimOptionalWhitespace(value: string): string {
  return value.replace(/^[ \t]+|[ \t]+$/g, '');
}
