// How many `apikey` headers a request carries. nginx before 1.23 shows only the first one in
// $http_apikey, so a wrong second key would pass unseen; every credential sent must be the key.
// r.rawHeadersIn keeps each header as sent: https://nginx.org/en/docs/njs/reference.html#r_raw_headers_in
function apikeyHeaderCount(r) {
    var count = 0;
    var headers = r.rawHeadersIn;
    for (var i = 0; i < headers.length; i++) {
        if (headers[i][0].toLowerCase() === 'apikey') count++;
    }
    return String(count);
}

export default { apikeyHeaderCount };
