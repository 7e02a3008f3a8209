import { MEDIA_SLOTS, sideRefusal, uploadLabelsSchema } from '@tessera/contracts';
import { z } from 'zod';

const owner = {
  productId: z.string().uuid(),
  applicantId: z.string().uuid(),
  enrollmentId: z.string().uuid(),
  slot: z.enum(MEDIA_SLOTS, { message: `must be one of ${MEDIA_SLOTS.join(', ')}` }),
};

/** PUT /internal/v1/resources/{enrollmentId}/{slot}?productId&applicantId&documentType&side&source */
export const uploadTargetSchema = z
  .object({ ...owner, ...uploadLabelsSchema.shape })
  .superRefine(({ slot, side }, ctx) => {
    const message = sideRefusal(slot, side);
    if (message) ctx.addIssue({ code: 'custom', path: ['side'], message });
  })
  .transform(({ documentType, side, source, ...rest }) => ({
    ...rest,
    labels: { documentType, side, source },
  }));

/** GET|HEAD /internal/v1/resources/{enrollmentId}/{slot}/{seq}?productId&applicantId */
export const resourceKeySchema = z.object({ ...owner, seq: z.coerce.number().int().min(1).max(999_999_999) });

/** POST /internal/v1/resources/{enrollmentId}/{slot}/commits|discards?productId&applicantId: a staged upload. */
export const stagedTicketSchema = z.object({ ticket: z.string().min(1).max(4096) });
