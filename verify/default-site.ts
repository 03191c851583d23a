// The site checked when --site is not given. The site's build replaces this module in the file it
// serves, so that the copy a site serves names that site.
export const DEFAULT_SITE = 'http://127.0.0.1:8080';
