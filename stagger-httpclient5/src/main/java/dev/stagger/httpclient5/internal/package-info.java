/** Apache HttpClient's responses as the HTTP rules read them; not API. */
@NullMarked
package dev.stagger.httpclient5.internal;

import org.jspecify.annotations.NullMarked;
