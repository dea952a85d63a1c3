/** OkHttp's responses as the HTTP rules read them; not API. */
@NullMarked
package dev.stagger.okhttp.internal;

import org.jspecify.annotations.NullMarked;
